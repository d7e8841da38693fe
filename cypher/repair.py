"""Generate → validate → repair loop for model-written Cypher (SGR §3.4.1 made robust).

Each round: the model replies, :func:`cypher.extract.extract_cypher` pulls out the query, :func:`cypher.validate.
validate` checks it statically and with ``EXPLAIN``. A query with blocking problems is shown back to the model
together with Neo4j's messages (unknown relationship type, label or property, syntax errors, writes) and the
allowed relationship types, for at most ``max_repairs`` further rounds. Then the accepted query runs in a READ
session with a timeout and a row cap (:meth:`sgr.graph.store.GraphStore.run_generated`); a run-time error is fed back
the same way while rounds remain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from cypher.extract import extract_cypher
from cypher.validate import Problem, validate
from sgr.core.errors import CypherError


@dataclass
class Attempt:
    """One round: the raw reply, the extracted query, its problems, and rows when it ran."""

    reply: str
    query: str
    problems: list[Problem] = field(default_factory=list)
    rows: list[dict[str, Any]] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.rows is not None and self.error is None


@dataclass
class CypherGeneration:
    """All rounds of one generation; ``final`` is the attempt that ran (None when none could run)."""

    attempts: list[Attempt] = field(default_factory=list)

    @property
    def final(self) -> Attempt | None:
        for a in reversed(self.attempts):
            if a.ok:
                return a
        return None

    @property
    def repairs(self) -> int:
        return max(0, len(self.attempts) - 1)


def repair_message(problems: Sequence[Problem], allowed: Sequence[str] | None) -> str:
    lines = ["Neo4j cannot use that query:"]
    lines += [f"- {p.message}" for p in problems[:5]]
    if allowed:
        lines.append("Use only these relationship types: " + ", ".join(f"`{r}`" for r in list(allowed)[:12]))
    lines.append("Reply with the corrected query only.")
    return "\n".join(lines)


def generate_cypher(llm, messages: Sequence[BaseMessage], *, store, vocabulary: set[str] | None,  # noqa: ANN001
                    grammar: str | None = None, max_repairs: int = 2, allowed: Sequence[str] | None = None,
                    execute: bool = True, timeout_s: float | None = None, row_cap: int | None = None,
                    stage: str = "cypher", max_tokens: int = 200) -> CypherGeneration:
    """Ask for a query, validate it, feed problems back up to ``max_repairs`` times, run the accepted one."""
    convo = list(messages)
    gen = CypherGeneration()
    for round_no in range(max_repairs + 1):
        reply = llm.complete(convo, stage=stage if round_no == 0 else f"{stage}-repair", grammar=grammar,
                             max_tokens=max_tokens)
        query = extract_cypher(reply)
        check = validate(store, query, vocabulary)
        attempt = Attempt(reply=reply, query=query, problems=check.problems)
        gen.attempts.append(attempt)
        if check.ok and execute:
            try:
                attempt.rows = store.run_generated(query, timeout_s=timeout_s, row_cap=row_cap).rows
            except CypherError as exc:
                attempt.error = str(exc)
                attempt.problems.append(Problem("runtime", str(exc).splitlines()[0][:300]))
        elif check.ok:
            attempt.rows = []
        if attempt.ok:
            break
        blocking = [p for p in attempt.problems if p.blocking or p.kind == "runtime"]
        convo = [*convo, AIMessage(reply or "(no query)"), HumanMessage(repair_message(blocking, allowed))]
    return gen
