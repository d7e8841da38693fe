"""The model's candidate on a profiled graph (:mod:`sgr.methods.sgr.profiled`, steps 5–6): its Cypher from the
profile's schema, checked, repaired and run read-only; its values grounded on the graph; and the terms the
:Entity route's decision (:func:`sgr.methods.sgr.decision.decide`) weighs it with against the compiled plan.
"""

from __future__ import annotations

from typing import Any

from cypher.repair import CypherGeneration, generate_cypher
from cypher.translate import profile_messages
from sgr.core.text import cypher_literal
from sgr.core.types import Answer
from sgr.graph.profile import GraphProfile, identifier
from sgr.graph.store import GraphStore
from sgr.methods.sgr.config import SGRConfig
from sgr.methods.sgr.decision import CandidateIn, DecisionInputs, VoteIn
from sgr.methods.sgr.grounding import NodeKeys, ground_by_shortest_path
from sgr.retrieval.entities import LinkedEntity, ProfileLinker
from sgr.retrieval.keys import KeyMention

#: Repair rounds of the model's Cypher at most (``max_repairs`` may say fewer): one, each round being a model call.
MAX_REPAIRS = 1


def model_query(llm: Any, store: GraphStore, profile: GraphProfile, question: str, entities: list[LinkedEntity],
                mentions: list[KeyMention], config: SGRConfig) -> CypherGeneration:
    """The model's query: the profile's schema with the linked nodes' labels and the question's keys first, the
    linked nodes as ``(:Label {naming_property: "value"})``; checked (read-only, one statement, known relationship
    types, Neo4j's EXPLAIN), repaired at most :data:`MAX_REPAIRS` times, run read-only (:func:`generate_cypher`)."""
    named = [f"(:{identifier(e.labels[0])} {{{identifier(profile.name_of(e.labels[0]))}: {cypher_literal(e.name)}}})"
             for e in entities if e.labels and profile.name_of(e.labels[0])]
    first_labels = [e.labels[0] for e in entities if e.labels] + [m.key for m in mentions if m.kind == "label"]
    keys = [m.key for m in mentions if m.kind != "label"]
    msgs = profile_messages(question, profile.schema_lines(first_labels, keys), named)
    types = [r.type for r in profile.relationships]
    return generate_cypher(llm, msgs, store=store, vocabulary=set(types), allowed=types,
                           max_repairs=min(MAX_REPAIRS, config.max_repairs), max_tokens=config.cypher_max_tokens,
                           row_cap=config.max_answers)


def ground_model_values(store: GraphStore, linker: ProfileLinker, keys: NodeKeys, query: str,
                        values: list[tuple[str | None, str]], entities: list[LinkedEntity], max_answers: int,
                        max_len: int) -> list[Answer]:
    """The model's values on the graph: a name is each node it names (the profile's naming properties) that a walk of
    at most ``max_len`` hops joins to a linked node (the walk is its evidence); a value that names no node is a
    literal, kept when the query names a linked node; linked nodes are no answers."""
    texts = [t for _, t in values][:max_answers]
    seeds = [e.id for e in entities]
    nodes: dict[str, list[str]] = {}
    for r in linker.matches(texts):
        if r["id"] not in seeds:
            nodes.setdefault(r["span"], []).append(r["id"])
    walks = ground_by_shortest_path(store, seeds, [i for t in texts for i in nodes.get(t, [])], max_len=max_len,
                                    keys=keys)
    low = query.lower()
    names_linked = any(e.name and str(e.name).lower() in low for e in entities)
    out: list[Answer] = []
    for t in dict.fromkeys(texts):
        if t in nodes:
            out += [Answer(t, i, 0.0, [walks[i]]) for i in nodes[t] if i in walks]
        elif names_linked and not any(t == e.name for e in entities):
            out.append(Answer(t, None, 0.0, []))
    return out


def answer_key(a: Answer) -> str:
    """A candidate's key in the decision: its node, else its text (a literal)."""
    return a.id or a.text


def decision_inputs(compiled: list[Answer], compiled_pattern: tuple[str, ...], model: list[Answer],
                    model_pattern: tuple[str, ...], prior: float) -> DecisionInputs:
    """The decision's terms on the profiled route (module docstring, step 6): the compiled plan's answers, then the
    model's; γ = 1 for an answer the plan's walks reach, else 0; δ = ρ = the prior; each answer's walk votes once
    (η = γ)."""
    reached = {answer_key(a) for a in compiled}
    cands = [CandidateIn(answer_key(a), a.text, "compiled", compiled_pattern, 1.0, prior) for a in compiled]
    cands += [CandidateIn(answer_key(a), a.text, "llm", model_pattern, 1.0 if answer_key(a) in reached else 0.0,
                          prior) for a in model]
    votes = [VoteIn(c.key, c.text, c.relations, prior, c.gamma, "model" if c.source == "llm" else "graph")
             for c in cands]
    return DecisionInputs(sources=["compiled", "llm"], candidates=cands, votes=votes,
                          model_patterns=[model_pattern] if model else [])
