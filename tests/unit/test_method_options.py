"""Methods declare the options they accept (sgr.methods.base.accepts), and what they declare is what they parse."""

from __future__ import annotations

import re

import pytest

from sgr.core.errors import ConfigError
from sgr.methods.base import MethodContext
from sgr.methods.registry import create_method, method_config, method_names, method_options


@pytest.mark.parametrize("name", method_names())
def test_declared_options_are_the_ones_the_method_parses(name: str) -> None:
    """An unknown key is refused with the list of valid keys, before the method touches a store or a model; that
    list is exactly what the method declares."""
    with pytest.raises(ConfigError) as info:
        create_method(name, MethodContext(store=None, options={"no_such_option": "1"}))  # type: ignore[arg-type]
    listed = re.search(r"valid options: (.*)$", str(info.value))
    assert listed, str(info.value)
    assert set(listed.group(1).split(", ")) == set(method_options(name))


def test_options_follow_the_declaration_not_the_module_path() -> None:
    assert {"hops", "max_repairs", "relation_retriever", "llm_cache"} <= method_options("sgr")
    assert method_config("sgr-compiled").__name__ == "SGRConfig"
    assert "hops" not in method_options("rcr") and "relation_retriever" in method_options("rcr")
    assert method_options("llm-only") == {"llm_cache"}  # it has no settings of its own, so it refuses hops
    with pytest.raises(ConfigError, match="unknown method"):
        method_options("no-such-method")
