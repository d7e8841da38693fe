"""Typed records that flow between sgr's stages, methods and the evaluation harness.

A *method* (SGR, SCR, RCR, the baselines) is any :class:`Answerer`: a :class:`Question` in, a
:class:`Prediction` out — ranked :class:`Answer` s, each grounded in the :class:`ReasoningPath` s
that support it, plus the :class:`Usage` (time per stage, Neo4j and LLM cost) it took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Question:
    """One question of a dataset (or typed by a user)."""

    id: str
    text: str
    topic_entities: list[str] = field(default_factory=list)  # entity ids/names as the dataset gives them
    answers: list[str] = field(default_factory=list)  # gold answer names (empty when unknown)
    hops: int | None = None  # MetaQA hop count
    qtype: str | None = None  # CWQ-style type, or MetaQA's relation-path type
    gold_paths: list[list[str]] = field(default_factory=list)  # gold relation paths, when known
    topic_mids: list[str] = field(default_factory=list)  # Freebase MIDs of the topic entities, when known
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReasoningPath:
    """A walk v0 -r1-> v1 … -rk-> vk in the graph. ``nodes`` are entity ids, ``names`` their names.

    ``directions[i]`` is ``"out"`` when relationship ``relations[i]`` points from ``nodes[i]`` to
    ``nodes[i+1]`` in the store, ``"in"`` when it points back (edges are walked both ways).
    """

    nodes: list[str]
    relations: list[str]
    score: float = 0.0
    names: list[str | None] = field(default_factory=list)
    directions: list[str] = field(default_factory=list)
    source: str = ""  # the stage or method that produced it (subgraph, cypher, scr, rcr, …)

    @property
    def answer(self) -> str:
        return self.nodes[-1]

    @property
    def answer_name(self) -> str:
        if self.names and self.names[-1]:
            return self.names[-1]
        return self.nodes[-1]

    def triples(self) -> list[tuple[str, str, str]]:
        """The path's edges as stored: (head, relation, tail) with the stored direction."""
        out = []
        for i, rel in enumerate(self.relations):
            a, b = self.nodes[i], self.nodes[i + 1]
            d = self.directions[i] if i < len(self.directions) else "out"
            out.append((a, rel, b) if d == "out" else (b, rel, a))
        return out

    def render(self) -> str:
        """``Jamaica -[location.country.languages_spoken]-> Jamaican English``."""
        labels = [(self.names[i] if i < len(self.names) and self.names[i] else n) for i, n in enumerate(self.nodes)]
        parts = [labels[0]]
        for i, rel in enumerate(self.relations):
            d = self.directions[i] if i < len(self.directions) else "out"
            parts.append(f"-[{rel}]->" if d == "out" else f"<-[{rel}]-")
            parts.append(labels[i + 1])
        return " ".join(parts)

    def summary(self) -> dict[str, Any]:
        """The JSON view used by ``sgr ask --json`` and the LangChain metadata: text, score, nodes, relations."""
        return {"text": self.render(), "score": round(self.score, 4), "nodes": self.nodes, "relations": self.relations,
                "directions": self.directions}


@dataclass
class Answer:
    """One answer, grounded: ``paths`` lead from a topic entity to it."""

    text: str  # name shown to people (the entity id when the node has no name)
    id: str | None = None  # the entity id in the graph, when the answer is a node
    score: float = 0.0
    paths: list[ReasoningPath] = field(default_factory=list)


@dataclass
class Usage:
    """What answering one question cost, measured by :class:`sgr.methods.base.UsageMeter` for every method.

    ``prompt_tokens``/``completion_tokens`` are billed (real model calls); the ``cached_*`` fields count what
    cache hits would have cost, as the call was first answered. ``llm_calls`` includes cached calls.
    """

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_cached_calls: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    llm_seconds: float = 0.0
    neo4j_queries: int = 0
    neo4j_seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    total_seconds: float = 0.0

    def add_stage(self, stage: str, seconds: float) -> None:
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds

    def merge(self, other: "Usage") -> None:
        """Add ``other`` (a later stage measured apart, e.g. ``scr+llm``'s answer call) to this usage."""
        for f in ("llm_calls", "prompt_tokens", "completion_tokens", "llm_cached_calls", "cached_prompt_tokens",
                  "cached_completion_tokens", "llm_seconds", "neo4j_queries", "neo4j_seconds", "total_seconds"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        for k, v in other.stage_seconds.items():
            self.add_stage(k, v)


@dataclass
class Prediction:
    """A method's output for one question."""

    question_id: str
    answers: list[Answer] = field(default_factory=list)  # ranked, best first
    paths: list[ReasoningPath] = field(default_factory=list)  # the evidence: top reasoning paths
    usage: Usage = field(default_factory=Usage)
    method: str = ""
    route: str | None = None  # e.g. "direct" or "collaborative" for SGR
    cypher: list[str] = field(default_factory=list)  # queries that ran, last one answered
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    confidence: float | None = None  # P(top answer correct), calibrated (sgr.methods.confidence); None: uncalibrated

    @property
    def answer_texts(self) -> list[str]:
        return [a.text for a in self.answers]


@runtime_checkable
class Answerer(Protocol):
    """The one interface of a question-answering method."""

    name: str

    def answer(self, question: Question) -> Prediction:
        ...
