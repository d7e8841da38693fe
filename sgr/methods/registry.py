"""The registry of question-answering methods, for ``sgr eval --method`` and ``sgr ask --method``.

A method is named by a string and built lazily from ``"module:factory"``: ``factory(ctx)`` gets a
:class:`MethodContext` and returns an :class:`sgr.core.types.Answerer`. Add a method with one line in
``METHODS``; nothing is imported until the method is used.
"""

from __future__ import annotations

import importlib

from sgr.core.errors import ConfigError
from sgr.methods.base import MethodContext
from sgr.core.types import Answerer

METHODS: dict[str, str] = {
    # baselines without an LLM (sgr/methods/baselines.py)
    "oracle-paths": "sgr.methods.baselines:create_oracle_paths",
    "neighbors": "sgr.methods.baselines:create_neighbors",
    # SGR and its ablations (sgr/methods/sgr/)
    "sgr": "sgr.methods.sgr.answerer:make_sgr",
    "sgr-direct": "sgr.methods.sgr.answerer:make_sgr_direct",
    "sgr-verify": "sgr.methods.sgr.answerer:make_sgr_verify",
    "sgr-no-schema": "sgr.methods.sgr.answerer:make_sgr_no_schema",
    "cypher-only": "sgr.methods.sgr.answerer:make_cypher_only",
    "llm-only": "sgr.methods.sgr.answerer:make_llm_only",
    "sgr-compiled": "sgr.methods.sgr.answerer:make_sgr_compiled",
    # SCR (sgr/methods/scr/)
    "scr": "sgr.methods.scr.method:create_scr",
    "scr+llm": "sgr.methods.scr.method:create_scr_llm",
    "scr-greedy": "sgr.methods.scr.method:create_scr_greedy",
    "scr-single-step": "sgr.methods.scr.method:create_scr_single_step",
    # RCR (sgr/methods/rcr/)
    "rcr": "sgr.methods.rcr.method:make_rcr",
    "rcr-ks0": "sgr.methods.rcr.method:make_rcr_ks0",
    "rcr-ks2": "sgr.methods.rcr.method:make_rcr_ks2",
}


def method_names() -> list[str]:
    """The registered method names, sorted (``sgr eval --method`` / ``sgr ask --method``)."""
    return sorted(METHODS)


def create_method(name: str, ctx: MethodContext) -> Answerer:
    """Build the method called ``name``; raises ConfigError naming the known methods otherwise."""
    target = METHODS.get(name)
    if target is None:
        raise ConfigError(f"unknown method {name!r}; known methods: {', '.join(method_names())}")
    module_name, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    return factory(ctx)
