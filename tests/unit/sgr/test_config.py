"""SGR's typed config: variants, options parsed once, unknown keys refused (sgr/methods/sgr/config.py)."""

import dataclasses

import pytest

from sgr.core.errors import ConfigError
from sgr.methods.sgr.config import VARIANTS, ExpansionConfig, SGRConfig, config_from_options


def test_a_typo_is_refused_with_the_valid_keys():
    with pytest.raises(ConfigError) as exc:
        config_from_options("sgr", {"muu": "0.9"})
    msg = str(exc.value)
    assert "muu" in msg and "mu" in msg and "epsilon" in msg and "\n" not in msg


def test_values_are_typed_and_variants_apply_first():
    cfg = config_from_options("sgr-compiled", {"mu": "0.6", "hops": "3", "lazy-verification": "false"})
    assert cfg.mu == 0.6 and cfg.hops == 3 and cfg.lazy_verification is False
    assert cfg.use_llm_schema is False and cfg.use_llm_cypher is False
    with pytest.raises(ConfigError):
        config_from_options("sgr", {"hops": "two"})
    with pytest.raises(ConfigError):
        config_from_options("sgr", {"path_retriever": "gnn"})
    for variant in VARIANTS:
        assert isinstance(config_from_options(variant), SGRConfig)


def test_the_expansion_fields_are_written_once():
    exp = {f.name for f in dataclasses.fields(ExpansionConfig)}
    own = set(SGRConfig.__dataclass_fields__) - exp
    assert exp and own and issubclass(SGRConfig, ExpansionConfig)
    assert len(dataclasses.fields(SGRConfig)) == len(exp) + len(own)


def test_llm_cache_option_reads_false_as_false() -> None:
    from sgr.methods.base import llm_cache_option

    assert llm_cache_option({}, "sgr") is True
    assert llm_cache_option({"llm_cache": "false"}, "sgr") is False  # `-o llm_cache=false` (a string) turns it off
    assert llm_cache_option({"llm_cache": "on"}, "sgr") is True and llm_cache_option({"llm_cache": False}, "rcr") is False
    with pytest.raises(ConfigError, match="llm_cache='maybe'"):
        llm_cache_option({"llm_cache": "maybe"}, "sgr")
