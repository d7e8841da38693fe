"""Question schema S_q = {V_q, R_q, C_q} (SGR §3.1.1, eq. 3).

* **R_q, candidate relations** — always drawn from the graph's own vocabulary (``(:Relation {name, text})``):
  a :class:`RelationRetriever` proposes the top-k by sentence-embedding similarity between the question and the
  relation texts (:class:`sgr.retrieval.relations.CosineRelationRetriever`, MiniLM, built once per graph version), ranked among
  the relation types around the linked entities, then the LLM picks and orders the ones to follow, answering
  with the numbers of the listed candidates in schema-constrained JSON (``{"relations": [2, 1]}``: only the k
  listed relations are expressible, and the reply is a few tokens long). A relation the graph does not have can
  never enter R_q. The final relevance of relation r is

      s(r) = (1 − β)·sim(q, r) / max_r' sim(q, r') + β·pick(r),   pick(r) = 1 − (rank_LLM(r) − 1)/|picked|

  (0 for relations the LLM did not pick), with β = ``SGRConfig.beta``.
* **C_q, constraints** — type, time, comparison, ordinal/superlative and count conditions found by rules
  (:func:`rule_constraints`); a 135M model's own constraint lists were noise and cost output tokens, so the
  model is not asked for them.
* **worked examples** — the nearest training question whose gold relations are all among the candidates is
  shown solved over the *same* numbered list (:func:`examples_for`; one line, the list is not repeated), else a
  static example turn.
* **V_q, entities** — mentions (bracketed names, the LLM's ``entities``) that :mod:`sgr.retrieval.entities` maps to nodes.

The retriever is a hook: anything with ``retrieve(question, k) -> list[ScoredRelation]`` (e.g. a trained
relation retriever) can replace the embedding one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

from sgr.core.lexicon import COMPARISON, COUNT, ORDINAL, RANKED_NUMBER, TYPE, TYPE_STOP, WHEN, WHERE, WHO, YEAR
from sgr.retrieval.relations import RelationRetriever, ScoredRelation

CONSTRAINT_KINDS = ("type", "time", "comparison", "ordinal", "count")


@dataclass
class Constraint:
    """One condition on the answer: ``kind`` in CONSTRAINT_KINDS, the words of the question, a normalised value."""

    kind: str
    text: str
    value: str | None = None


@dataclass
class QuestionSchema:
    """S_q: mentions (to be linked into V_q), candidate relations R_q (best first), constraints C_q."""

    question: str
    mentions: list[str] = field(default_factory=list)
    relations: list[ScoredRelation] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    ordered: list[str] = field(default_factory=list)  # the LLM's ordered relation choice (a path skeleton)
    source: str = "embedding"  # "grammar" (model paths under the graph grammar), "llm" (JSON pick) or "embedding"
    exemplars: list[str] = field(default_factory=list)  # questions of the worked examples shown
    model_paths: list = field(default_factory=list)  # the model's N-best relation paths (trie.ModelPath), best first
    plans: list = field(default_factory=list)  # nearest training questions' paths that exist (trie.ModelPath, ρ = cos)
    reply: str | None = None  # the model's raw schema reply (grammar route)

    def relation_score(self, name: str) -> float:
        for r in self.relations:
            if r.name == name:
                return r.score
        return 0.0

    @property
    def relation_names(self) -> list[str]:
        return [r.name for r in self.relations]

    def has(self, kind: str) -> bool:
        return any(c.kind == kind for c in self.constraints)

    @property
    def cue_text(self) -> str:
        """The question with its entity mentions masked: the words constraints are read from."""
        return constraint_text(self.question, self.mentions)

    def model_rho(self) -> dict[tuple[str, ...], float]:
        """ρ of each of the model's N-best relation paths (measured ones only)."""
        return {tuple(p.relations): p.rho for p in self.model_paths if p.rho == p.rho}  # NaN: not measured

    def relations_text(self, max_relations: int = 3) -> str | None:
        """R_q as the verifier's prompt shows it: the ordered choice, else the best relations; None without any."""
        if not self.relations:
            return None
        rels = self.ordered or self.relation_names[:max_relations]
        return " -> ".join(dict.fromkeys(rels[:max_relations]))


# -- constraints -------------------------------------------------------------------------------------------------
def constraint_text(question: str, mentions: Sequence[str]) -> str:
    """``question`` with its entity mentions (and bracketed spans) replaced by ``X``: a constraint's words must lie
    outside the names — "The Count of Monte Cristo" asks for no count, "The Last Stand" for no ordinal, "Camille
    Claudel 1915" for no year."""
    from sgr.methods.sgr.exemplars import mask_entity

    q = mask_entity(question, None)
    for m in sorted({m for m in mentions if m}, key=len, reverse=True):  # the longer name first
        q = mask_entity(q, m)
    return q


def rule_constraints(question: str) -> list[Constraint]:
    """Constraints C_q found by patterns (SGR §3.1.1: type, time, comparison, ordinal/superlative, count); pass the
    question through :func:`constraint_text` first when its entity mentions are known."""
    out: list[Constraint] = []
    q = question.replace("[", "").replace("]", "")
    if WHO.search(q):
        out.append(Constraint("type", WHO.search(q).group(1), "person"))
    elif WHEN.search(q):
        out.append(Constraint("type", WHEN.search(q).group(0).strip(), "time"))
    elif WHERE.search(q):
        out.append(Constraint("type", "where", "place"))
    else:
        m = TYPE.search(q)
        if m and m.group(2).split()[0].lower() not in TYPE_STOP:
            out.append(Constraint("type", m.group(0), m.group(2).split()[0].lower()))
    for m in YEAR.finditer(q):
        out.append(Constraint("time", m.group(0), m.group(1)))
    m = COMPARISON.search(q)
    if m:
        out.append(Constraint("comparison", m.group(0), m.group(1).lower()))
    m = ORDINAL.search(q)
    if m:
        out.append(Constraint("ordinal", m.group(0), m.group(1).lower()))
    if COUNT.search(q) and not RANKED_NUMBER.search(q):
        out.append(Constraint("count", COUNT.search(q).group(0), None))
    return out


def bracket_mentions(question: str) -> list[str]:
    """Mentions marked with brackets, MetaQA style: ``what films did [Tom Hanks] star in``."""
    return [m.strip() for m in re.findall(r"\[([^\]]+)\]", question) if m.strip()]


# -- the LLM stage -----------------------------------------------------------------------------------------------
#: The JSON route's system message: the model picks numbered candidate relations (an endpoint without grammars, or
#: ``path_grammar=false``). The grammar route's prompt, which ``sgr llm tune`` trains on, is
#: :data:`sgr.methods.sgr.prompts.SCHEMA_SYSTEM`.
PICK_RELATIONS_SYSTEM = (
    "You are a knowledge graph expert. For a question, write its query schema as one JSON object: "
    "\"relations\": the numbers of the candidate relations to follow from the topic entity to the answer, in order. "
    "Reply with the JSON object only.")
PICK_RELATIONS_ENTITIES_SYSTEM = PICK_RELATIONS_SYSTEM.replace(
    "write its query schema as one JSON object: ",
    "write its query schema as one JSON object: \"entities\": the names of the things the question is about, "
    "copied from the question; ")

STATIC_EXAMPLE = {
    "question": "what does jamaican people speak?",
    "entity": "Jamaica",
    "candidates": ["location.location.containedby", "location.country.languages_spoken",
                   "location.country.official_language", "people.person.nationality"],
    "relations": ["location.country.languages_spoken"],
}


def reply_model(n_candidates: int, max_relations: int, with_entities: bool) -> type[BaseModel]:
    """The pydantic model of the schema reply: ``relations`` are 1-based numbers of the candidates, so the JSON
    schema (and constrained decoding) only admits relations of the list; replies stay a few tokens long."""
    number = Literal[tuple(range(1, n_candidates + 1))]  # type: ignore[valid-type]
    fields: dict = {}
    if with_entities:
        fields["entities"] = (list[str], Field(default_factory=list, max_length=3))
    fields["relations"] = (list[number], Field(min_length=1, max_length=max_relations))  # type: ignore[valid-type]
    return create_model("SchemaReply", **fields)


def _user_message(question: str, entity: str | None, candidates: Sequence[str]) -> str:
    lines = [f"Question: {question}"]
    if entity:
        lines.append(f"Topic entity: {entity}")
    lines.append("Candidate relations:")
    lines += [f"{i}. {c}" for i, c in enumerate(candidates, 1)]
    return "\n".join(lines)


def _reply_json(example: dict, with_entities: bool) -> str:
    import json

    obj: dict = {}
    if with_entities:
        obj["entities"] = [example["entity"]] if example.get("entity") else []
    obj["relations"] = [example["candidates"].index(r) + 1 for r in example["relations"]]
    return json.dumps(obj)


def schema_messages(question: str, entity: str | None, candidates: Sequence[str], examples: Sequence[dict],
                    with_entities: bool) -> list[BaseMessage]:
    """System message, worked examples (each a user/assistant pair), then the question."""
    msgs: list[BaseMessage] = [SystemMessage(PICK_RELATIONS_ENTITIES_SYSTEM if with_entities else PICK_RELATIONS_SYSTEM)]
    for ex in examples:
        msgs.append(HumanMessage(_user_message(ex["question"], None if with_entities else ex.get("entity"),
                                               ex["candidates"])))
        msgs.append(AIMessage(_reply_json(ex, with_entities)))
    msgs.append(HumanMessage(_user_message(question, None if with_entities else entity, candidates)))
    return msgs


def combine_scores(candidates: Sequence[ScoredRelation], ordered: Sequence[str], beta: float) -> list[ScoredRelation]:
    """s(r) = (1 − β)·sim(r)/max sim + β·pick(r) (module docstring); returns a new list sorted best first."""
    top = max((c.similarity for c in candidates), default=0.0)
    picked = [r for i, r in enumerate(ordered) if r not in ordered[:i]]
    out = []
    for c in candidates:
        base = c.similarity / top if top > 0 else 0.0
        rank = picked.index(c.name) + 1 if c.name in picked else None
        pick = (1.0 - (rank - 1) / len(picked)) if rank else 0.0
        out.append(ScoredRelation(c.name, (1 - beta) * base + beta * pick, c.text, c.similarity, rank))
    return sorted(out, key=lambda r: -r.score)


def examples_for(question: str, entity: str | None, candidates: Sequence[str], exemplars, n: int,  # noqa: ANN001
                 search: int = 8) -> list[dict]:
    """Worked examples over the question's own candidate list: the nearest training questions whose gold
    relations are all among the candidates (so the example's answer is expressible); [] when none is."""
    if exemplars is None or not len(exemplars) or n <= 0:
        return []
    out = []
    for ex, _sim in exemplars.nearest(question, search, entity):
        if ex.relations and all(r in candidates for r in ex.relations):
            out.append({"question": ex.question, "entity": ex.entity, "candidates": list(candidates),
                        "relations": list(ex.relations)})
            if len(out) >= n:
                break
    return out


def extract_schema(question: str, *, retriever: RelationRetriever, llm=None, entity: str | None = None,  # noqa: ANN001
                   exemplars=None, k: int = 10, beta: float = 0.5, max_relations: int = 3,  # noqa: ANN001
                   n_examples: int = 1, need_mentions: bool = False,
                   among: Sequence[str] | None = None, stage: str = "schema") -> QuestionSchema:
    """Build S_q for ``question`` (module docstring). ``entity``: the topic entity's name when already known;
    ``among``: the relation types around the linked entities (candidates are ranked among them).

    Without ``llm`` (or when the model's reply cannot be used) R_q is the embedding ranking alone and
    ``source`` says ``"embedding"``. ``exemplars`` (an :class:`sgr.methods.sgr.exemplars.ExemplarPool`) supplies worked
    examples (training questions over the same candidate list); else a static example is shown.
    """
    from sgr.methods.sgr.exemplars import mask_entity

    masked = mask_entity(question, entity)
    candidates = retriever.retrieve(masked, k, among)
    mentions = bracket_mentions(question)
    constraints = rule_constraints(constraint_text(question, mentions + ([entity] if entity else [])))
    schema = QuestionSchema(question, mentions, combine_scores(candidates, [], 0.0), constraints, [], "embedding")
    if llm is None or not candidates:
        return schema
    names = [c.name for c in candidates]
    with_entities = need_mentions and not mentions
    examples = [] if with_entities else examples_for(question, entity, names, exemplars, n_examples)
    if not examples:
        examples = [STATIC_EXAMPLE]
    schema.exemplars = [e["question"] for e in examples]
    model = reply_model(len(names), max_relations, with_entities)
    msgs = schema_messages(question, entity, names, examples, with_entities)
    result = llm.try_structured(msgs, model, stage=stage, max_retries=1, max_tokens=40)
    reply = result.value
    if reply is None:
        return schema
    schema.ordered = [names[i - 1] for i in getattr(reply, "relations", [])]  # repeats kept (a→b→a paths)
    schema.relations = combine_scores(candidates, schema.ordered, beta)
    schema.source = "llm" if schema.ordered else "embedding"
    if with_entities:
        qlow = question.lower()
        for e in getattr(reply, "entities", []) or []:
            e = e.strip()
            words = [w for w in e.lower().split() if len(w) >= 3]
            if e and (e.lower() in qlow or (words and all(w[:4] in qlow for w in words))) and e not in schema.mentions:
                schema.mentions.append(e)
    return schema
