"""sgr: grounded question answering over a Freebase-style knowledge graph in Neo4j.

What a notebook needs, from one import (names are loaded on first use, so ``import sgr`` stays fast)::

    import sgr

    with sgr.GraphStore.from_settings() as store:
        sgr.load(["graph.nt.gz"], store=store)
        result = sgr.ask("what does jamaican people speak?", store=store, method="sgr")
        for answer in result.prediction.answers:
            print(answer.text, answer.score, answer.paths[0].render() if answer.paths else "")

- :func:`ask`, :func:`load`, :func:`evaluate` (``sgr/api.py``) and :class:`AskResult`, the method-neutral trace;
- :func:`create_method` / :func:`method_names` / :class:`MethodContext`: build any method (SGR, SCR, RCR, baselines);
- :class:`GraphStore`: the Neo4j connection; the records :class:`Question`, :class:`Prediction`, :class:`Answer`,
  :class:`ReasoningPath`, :class:`Usage`; SGR's own trace :class:`SGRResult`;
- the errors: :class:`SgrError` and its subclasses (one-line messages, an exit code each).

The LangChain retriever is :class:`sgr.langchain.SgrRetriever` (``import sgr.langchain``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "ask": "sgr.api", "load": "sgr.api", "evaluate": "sgr.api", "AskResult": "sgr.api",
    "create_method": "sgr.methods.registry", "method_names": "sgr.methods.registry", "METHODS": "sgr.methods.registry",
    "MethodContext": "sgr.methods.base",
    "GraphStore": "sgr.graph.store",
    "Question": "sgr.core.types", "Prediction": "sgr.core.types", "Answer": "sgr.core.types",
    "ReasoningPath": "sgr.core.types", "Usage": "sgr.core.types", "Answerer": "sgr.core.types",
    "SGRResult": "sgr.methods.sgr.answerer",
    "SgrError": "sgr.core.errors", "ConfigError": "sgr.core.errors", "InputError": "sgr.core.errors",
    "Neo4jUnavailable": "sgr.core.errors", "Neo4jServerError": "sgr.core.errors", "LoadError": "sgr.core.errors",
    "LLMError": "sgr.core.errors", "CypherError": "sgr.core.errors", "EntityNotFound": "sgr.core.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562) and keep it in the module namespace."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sgr' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from sgr.api import AskResult, ask, evaluate, load
    from sgr.core.errors import (ConfigError, CypherError, EntityNotFound, InputError, LLMError, LoadError,
                                 Neo4jServerError, Neo4jUnavailable, SgrError)
    from sgr.core.types import Answer, Answerer, Prediction, Question, ReasoningPath, Usage
    from sgr.graph.store import GraphStore
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import METHODS, create_method, method_names
    from sgr.methods.sgr.answerer import SGRResult
