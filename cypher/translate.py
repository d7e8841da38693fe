"""NL→Cypher prompt: Q_c = g_θ(q, S_q) (SGR §3.4.1, eq. 8).

The model sees a *compact schema*: only the candidate relation types of S_q (the LLM's ordered choice first),
each with the endpoint labels observed in the graph and its stored direction, e.g.::

    (:Entity)-[:`government.political_district.representatives`]->(:CVT)

plus the linked topic entity and the question, after a system message and one worked example in the query
shape that :func:`cypher.grammar.cypher_grammar` admits (``MATCH (e:Entity {name: …})-[…]->(x:Entity) RETURN
DISTINCT x.name AS answer``). When the LLM supports constrained decoding the reply is also constrained by that
grammar, built from the same relation types and entity names (and C_q: finite conditions, the ordinal's
ORDER BY … LIMIT 1), so the model cannot name a relation the graph lacks. :func:`no_schema_messages` is the
ablation without schema guidance (no relation list, no grammar).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from cypher.compile import compile_answer_query
from cypher.conditions import QueryConstraints
from sgr.graph.store import GraphStore, quote_identifier

SYSTEM = (
    "You translate questions into Cypher for a Neo4j knowledge graph. Nodes are (:Entity {id, name}); "
    "(:CVT) nodes have no name and join the parts of one fact. Use only the relationship types listed, in the "
    "direction shown. Write one read-only query: MATCH from the topic entity, RETURN DISTINCT x.name AS answer. "
    "Reply with the query only.")
SYSTEM_NO_SCHEMA = (
    "You translate questions into Cypher for a Neo4j knowledge graph whose nodes are (:Entity {id, name}). "
    "Write one read-only query: MATCH from the topic entity, RETURN DISTINCT x.name AS answer. "
    "Reply with the query only.")

#: Worked example for Freebase-style graphs (a CVT hop) and for graphs with plain relation names.
STATIC_EXAMPLES = {
    "freebase": {
        "question": "who is governor of ohio 2011?", "entity": "Ohio",
        "schema": ["(:Entity)-[:`government.political_district.representatives`]->(:CVT)",
                   "(:CVT)-[:`government.government_position_held.office_holder`]->(:Entity)",
                   "(:Entity)-[:`location.location.containedby`]->(:Entity)"],
        "steps": [("government.political_district.representatives", "out"),
                  ("government.government_position_held.office_holder", "out")],
        "cvt": [1],
    },
    "plain": {
        "question": "who directed the films starred by Tom Hanks", "entity": "Tom Hanks",
        "schema": ["(:Entity)-[:`starred_actors`]->(:Entity)", "(:Entity)-[:`directed_by`]->(:Entity)",
                   "(:Entity)-[:`written_by`]->(:Entity)"],
        "steps": [("starred_actors", "in"), ("directed_by", "out")],
    },
}


@dataclass
class Endpoint:
    """Observed labels at the two ends of a relationship type, in its stored direction."""

    relation: str
    head: str  # "Entity" or "CVT"
    tail: str

    def render(self) -> str:
        return f"(:{self.head})-[:{quote_identifier(self.relation)}]->(:{self.tail})"


_ENDPOINTS: dict[tuple[str, str, str], Endpoint] = {}
_LOCK = threading.Lock()


def relation_endpoints(store: GraphStore, relations: Sequence[str], graph_version: str) -> list[Endpoint]:
    """Endpoint labels of each relation (sampled: the majority of up to 50 relationships), cached per graph."""
    out = []
    for rel in relations:
        key = (store.uri, graph_version, rel)
        with _LOCK:
            hit = _ENDPOINTS.get(key)
        if hit is None:
            rows = store.read(
                f"MATCH (a)-[r:{quote_identifier(rel)}]->(b) WITH a, b LIMIT 50 "
                "RETURN sum(CASE WHEN a:CVT THEN 1 ELSE 0 END) AS hc, sum(CASE WHEN b:CVT THEN 1 ELSE 0 END) AS tc, "
                "count(*) AS n")
            n = rows[0]["n"] if rows else 0
            head = "CVT" if n and rows[0]["hc"] * 2 > n else "Entity"
            tail = "CVT" if n and rows[0]["tc"] * 2 > n else "Entity"
            hit = Endpoint(rel, head, tail)
            with _LOCK:
                _ENDPOINTS[key] = hit
        out.append(hit)
    return out


def _user(question: str, entity: str | None, schema_lines: Sequence[str]) -> str:
    lines = []
    if schema_lines:
        lines.append("Relationship types:")
        lines += list(schema_lines)
    if entity:
        lines.append(f"Topic entity: {entity}")
    lines.append(f"Question: {question}")
    return "\n".join(lines)


def example_for(relations: Sequence[str], exemplar=None) -> dict:  # noqa: ANN001
    """The worked example: a training exemplar with directions and entity (MetaQA), else a static one."""
    if exemplar is not None and exemplar.entity and exemplar.directions:
        steps = list(zip(exemplar.relations, exemplar.directions))
        schema = [f"(:Entity)-[:{quote_identifier(r)}]->(:Entity)" for r in dict.fromkeys(exemplar.relations)]
        return {"question": exemplar.question, "entity": exemplar.entity, "schema": schema, "steps": steps}
    freebase = any("." in r for r in relations)
    return STATIC_EXAMPLES["freebase" if freebase else "plain"]


def translate_messages(question: str, entity: str | None, endpoints: Sequence[Endpoint],
                       example: dict) -> list[BaseMessage]:
    """System message, one worked example, then the question with its compact schema."""
    answer = compile_answer_query(example["entity"], example["steps"], example.get("cvt", ()))
    return [SystemMessage(SYSTEM),
            HumanMessage(_user(example["question"], example["entity"], example["schema"])),
            AIMessage(answer),
            HumanMessage(_user(question, entity, [e.render() for e in endpoints]))]


def no_schema_messages(question: str, entity: str | None) -> list[BaseMessage]:
    """The ablation prompt: no candidate relations, no endpoint labels (SGR §4.3, "without schema prompts")."""
    ex = STATIC_EXAMPLES["freebase"]
    return [SystemMessage(SYSTEM_NO_SCHEMA),
            HumanMessage(_user(ex["question"], ex["entity"], [])),
            AIMessage(compile_answer_query(ex["entity"], ex["steps"], ex["cvt"])),
            HumanMessage(_user(question, entity, []))]


#: The NL→Cypher prompt on a profiled graph (a user's own labels and properties, :mod:`sgr.graph.profile`): the
#: system text and one worked example over an invented schema (no label, type or property of any benchmark graph), so
#: the model sees the shape of the answer — a MATCH from the named node by its naming property, a literal condition,
#: ``RETURN … AS answer``. Both are module constants a caller may replace.
PROFILE_SYSTEM = (
    "You translate questions into Cypher for a Neo4j graph. Use only the labels, properties and relationship types "
    "listed, in the direction shown. Write one read-only query: MATCH from the named node by its name property, "
    "RETURN DISTINCT the answer AS answer. Reply with the query only.")
PROFILE_EXAMPLE = {
    "question": "which books did Ursula K. Le Guin write after 1970?",
    "schema": ["(:Author {name: String, born: Long})", "(:Book {title: String, published: Long})",
               "(:Author)-[:WROTE]->(:Book)", "(:Book)-[:PART_OF]->(:Series)"],
    "named": ['(:Author {name: "Ursula K. Le Guin"})'],
    "query": 'MATCH (a:Author {name: "Ursula K. Le Guin"})-[:WROTE]->(b:Book) WHERE b.published > 1970 '
             "RETURN DISTINCT b.title AS answer",
}


def _profile_user(question: str, schema_lines: Sequence[str], named: Sequence[str]) -> str:
    return "\n".join(["Schema:", *schema_lines, "Named nodes:", *(named or ["(none)"]), f"Question: {question}"])


def profile_messages(question: str, schema_lines: Sequence[str], named: Sequence[str],
                     example: dict | None = None) -> list[BaseMessage]:
    """System message, the worked example (:data:`PROFILE_EXAMPLE` unless ``example``), then the question with the
    profile's schema (:meth:`sgr.graph.profile.GraphProfile.schema_lines`, the question's keys and labels first)
    and its linked nodes as ``(:Label {naming_property: "value"})``."""
    ex = example or PROFILE_EXAMPLE
    return [SystemMessage(PROFILE_SYSTEM), HumanMessage(_profile_user(ex["question"], ex["schema"], ex["named"])),
            AIMessage(ex["query"]), HumanMessage(_profile_user(question, schema_lines, named))]


def grammar_for(relations: Sequence[str], entity_names: Sequence[str], max_hops: int,
                constraints: QueryConstraints | None = None, *, cvt_relations: Sequence[str] = (),
                has_types: bool = False) -> str | None:
    """The GBNF of :func:`cypher.grammar.cypher_grammar` for these relations, names and C_q (None without relations).

    ``cvt_relations``: those that meet CVT nodes (a hop may pass a ``(c:CVT)`` node over two of them). The conditions
    are finite alternatives from ``constraints`` (no free strings: free-string conditions made constrained decoding
    about 7× slower on the local model, 114 s instead of 16 s for 70 tokens).
    """
    from cypher.grammar import cypher_grammar

    rels = [r for r in relations if r]
    if not rels:
        return None
    return cypher_grammar(rels, [n for n in entity_names if n], max(1, min(5, max_hops)), constraints,
                          cvt_relations=cvt_relations, has_types=has_types)
