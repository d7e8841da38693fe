"""The registry of question-answering methods, for ``sgr eval --method`` and ``sgr ask --method``.

A method is named by a string and built lazily from ``"module:factory"``: ``factory(ctx)`` gets a
:class:`MethodContext` and returns an :class:`sgr.core.types.Answerer`. Add a method with one line in
``METHODS``; nothing is imported until the method is used. Each factory declares the options its method accepts
(:func:`sgr.methods.base.accepts`); :func:`method_options` reads them.
"""

from __future__ import annotations

import importlib
from typing import Any

from sgr.core.errors import ConfigError
from sgr.methods.base import MethodContext, declared_options
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


def _factory(name: str) -> Any:
    target = METHODS.get(name)
    if target is None:
        raise ConfigError(f"unknown method {name!r}; known methods: {', '.join(method_names())}")
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def create_method(name: str, ctx: MethodContext) -> Answerer:
    """Build the method called ``name``; raises ConfigError naming the known methods otherwise."""
    return _factory(name)(ctx)


def method_config(name: str) -> type:
    """The typed config class whose fields are the ``-o`` options of method ``name``."""
    return declared_options(_factory(name))[0]


def method_options(name: str) -> frozenset[str]:
    """Every ``-o`` option method ``name`` accepts (its config's fields, the keys its factory reads, the common ones);
    ConfigError for an unknown method."""
    return declared_options(_factory(name))[1]
