"""The registry of question-answering methods, for ``sgr eval --method`` and ``sgr ask --method``.

A method is named by a string and built lazily from ``"module:factory"``: ``factory(ctx)`` gets a
:class:`MethodContext` and returns an :class:`sgr.types.Answerer`. Add a method with one line in
``METHODS``; nothing is imported until the method is used.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from sgr.errors import ConfigError
from sgr.store import GraphStore
from sgr.types import Answerer

METHODS: dict[str, str] = {
    # baselines without an LLM (sgr/baselines.py)
    "oracle-paths": "sgr.baselines:create_oracle_paths",
    "neighbors": "sgr.baselines:create_neighbors",
    # SGR and its ablations (sgr/pipeline.py)
    "sgr": "sgr.pipeline:make_sgr",
    "sgr-direct": "sgr.pipeline:make_sgr_direct",
    "sgr-no-verify": "sgr.pipeline:make_sgr_no_verify",
    "sgr-no-schema": "sgr.pipeline:make_sgr_no_schema",
    "cypher-only": "sgr.pipeline:make_cypher_only",
    "llm-only": "sgr.pipeline:make_llm_only",
    "sgr-compiled": "sgr.pipeline:make_sgr_compiled",
    # SCR (sgr/scr/)
    "scr": "sgr.scr.method:create_scr",
    "scr+llm": "sgr.scr.method:create_scr_llm",
    "scr-greedy": "sgr.scr.method:create_scr_greedy",
    "scr-single-step": "sgr.scr.method:create_scr_single_step",
    # RCR (sgr/rcr.py)
    "rcr": "sgr.rcr:make_rcr",
    "rcr-ks0": "sgr.rcr:make_rcr_ks0",
    "rcr-ks2": "sgr.rcr:make_rcr_ks2",
}


@dataclass
class MethodContext:
    """What a method factory may use: the store, LLM settings, and free-form options from flags."""

    store: GraphStore
    options: dict[str, Any] = field(default_factory=dict)
    llm: Any = None  # an sgr.llm.LLM when the method needs one (built lazily by the caller)


def method_names() -> list[str]:
    return sorted(METHODS)


def create_method(name: str, ctx: MethodContext) -> Answerer:
    """Build the method called ``name``; raises ConfigError naming the known methods otherwise."""
    target = METHODS.get(name)
    if target is None:
        raise ConfigError(f"unknown method {name!r}; known methods: {', '.join(method_names())}")
    module_name, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(ctx)
