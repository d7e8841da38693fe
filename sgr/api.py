"""The public API behind the ``sgr`` commands: one function per thing a user does.

The CLI parses flags, calls one of these and renders what comes back; notebooks call them directly.
"""

from __future__ import annotations

from typing import Any, Sequence

from sgr.core.errors import SgrError
from sgr.core.types import Question
from sgr.graph.store import GraphStore
from sgr.methods.base import MethodContext
from sgr.methods.registry import METHODS, create_method
from sgr.methods.sgr.answerer import SGRAnswerer, SGRConfig, SGRResult


def ask(text: str, *, store: GraphStore, topics: Sequence[str] = (), method: str = "sgr", hops: int = 2,
        max_repairs: int = 2, llm: Any = None, options: dict[str, Any] | None = None) -> SGRResult:
    """``sgr ask``: answer one typed question with a graph-based method and return the full trace.

    ``llm-only`` and every other method of :data:`sgr.methods.registry.METHODS` (``rcr``, ``scr`` …) are answered too; their
    trace is their :class:`Prediction`. Raises EntityNotFound / LLMError / Neo4jUnavailable with one-line messages.
    """
    store.verify()
    sgr_options = {"hops": hops, "max_repairs": max_repairs} if METHODS.get(method, "").startswith("sgr.methods.sgr.") else {}
    opts = {**sgr_options, **(options or {})}  # other methods refuse SGR's options
    answerer = create_method(method, MethodContext(store=store, options=opts, llm=llm))
    question = Question(id="ask", text=text.strip(), topic_entities=list(topics))
    if isinstance(answerer, SGRAnswerer):  # SGR variants give the full trace, other methods their Prediction
        return answerer.run(question)
    pred = answerer.answer(question)
    if pred.error and not pred.answers:
        raise SgrError(f"{method}: {pred.error}")
    return SGRResult(question=question, method=method, prediction=pred, config=SGRConfig())
