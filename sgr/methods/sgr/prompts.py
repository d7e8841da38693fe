"""The schema prompt SGR sends to its model, and the exact text the model answers with (one format for both).

The schema stage (eq. 3 of the SGR paper: S_q = {V_q, R_q, C_q}) asks the model for relation paths from the
question's topic entities, plus the question's constraints. The same functions build the prompt at answer
time and the (prompt, target) pairs ``sgr llm tune`` trains on, so a tuned model sees exactly what it was
trained on. The reply is line-based so that a per-question GBNF grammar (only relation paths that exist in the
graph from the topic entities) can constrain it:

    path: people.person.nationality > location.country.languages_spoken
    path: location.country.official_language
    constraint: time = 2009

Relation names are the graph's relationship types; CVT hops are not written (a path names relations only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

SCHEMA_SYSTEM = (
    "You map a question about a knowledge graph to the relation paths that lead from its topic entity "
    "to the answer, best first, one per line as 'path: rel1 > rel2', then any constraint of the question as "
    "'constraint: KIND = VALUE' (KIND is type, time, comparison, ordinal or count)."
)

PATH_PREFIX = "path: "
CONSTRAINT_PREFIX = "constraint: "
PATH_SEPARATOR = " > "
CONSTRAINT_KINDS = ("type", "time", "comparison", "ordinal", "count")

_CONSTRAINT_LINE = re.compile(r"^constraint:\s*(type|time|comparison|ordinal|count)\s*=\s*(.+?)\s*$")


def schema_user(question: str, topics: Sequence[str]) -> str:
    """The user turn: the question and the names of its linked topic entities."""
    return f"Question: {question.strip()}\nTopic: {' | '.join(t.strip() for t in topics) or '(none)'}"


@dataclass(frozen=True)
class WorkedExample:
    """A training question (never a test one) with its topics and the reply it should get (:func:`schema_target`)."""

    question: str
    topics: tuple[str, ...]
    reply: str

    def turns(self) -> tuple[str, str]:
        """The (user, assistant) turns it adds before the question (:func:`schema_prompt`; ``sgr llm tune``)."""
        return schema_user(self.question, self.topics), self.reply


def schema_prompt(question: str, topics: Sequence[str],
                  examples: Sequence[WorkedExample] = ()) -> list[BaseMessage]:
    """System + user messages of the schema stage, after ``examples`` as user/assistant turns.

    At answer time SGR adds the nearest training questions (``SGRConfig.n_examples``) so that an untuned model sees
    the relation-path format filled in for a question like this one — it copies the shape (how many relations, in
    which order) under the graph grammar. ``sgr llm tune`` trains on this same form with ``--examples N`` worked
    examples (0: the zero-shot form), and SGR then sends tuned weights as many.
    """
    msgs: list[BaseMessage] = [SystemMessage(SCHEMA_SYSTEM)]
    for ex in examples:
        user, reply = ex.turns()
        msgs += [HumanMessage(user), AIMessage(reply)]
    return msgs + [HumanMessage(schema_user(question, topics))]


def format_path(path: Sequence[str]) -> str:
    return PATH_SEPARATOR.join(path)


def schema_target(paths: Sequence[Sequence[str]], constraints: Sequence[tuple[str, str]] = ()) -> str:
    """The reply text for ``paths`` (best first) and ``constraints`` as (kind, value) pairs."""
    lines = [PATH_PREFIX + format_path(p) for p in paths if p]
    lines += [f"{CONSTRAINT_PREFIX}{kind} = {value}" for kind, value in constraints]
    return "\n".join(lines)


def parse_schema_reply(text: str) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """Relation paths (in order, duplicates dropped) and (kind, value) constraints from a reply.

    Lines in neither form are ignored; a path line's relations are split on ``>``.
    """
    paths: list[tuple[str, ...]] = []
    constraints: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(PATH_PREFIX.strip()):
            rels = tuple(r.strip() for r in line[len(PATH_PREFIX.strip()):].split(">") if r.strip())
            if rels and rels not in paths:
                paths.append(rels)
            continue
        m = _CONSTRAINT_LINE.match(line)
        if m:
            constraints.append((m.group(1), m.group(2)))
    return paths, constraints
