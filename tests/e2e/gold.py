"""Test helper: a Prediction built by walking a WebQSP record's gold relation paths in the store.

Nothing here is hard-coded: the topic entity and relation paths come from the record, the
reached entities (and so the answers) from Neo4j.
"""

from __future__ import annotations

from sgr.graph.store import GraphStore
from sgr.core.types import Answer, Prediction, ReasoningPath

STEP = ("MATCH (a:Entity {id: $id})-[r]-(b:Entity) WHERE type(r) = $rel "
        "RETURN DISTINCT b.id AS id, b.name AS name, startNode(r) = a AS out ORDER BY id")


def walk(store: GraphStore, topic: str, relations: list[str], limit: int = 40) -> list[ReasoningPath]:
    """Every walk topic -r1- … -rk- x in the store (edges both ways), at most ``limit``."""
    start = store.read("MATCH (e:Entity {id: $id}) RETURN e.name AS name", {"id": topic})
    if not start:
        return []
    frontier = [([topic], [start[0]["name"]], [])]
    for rel in relations:
        nxt = []
        for nodes, names, dirs in frontier:
            for row in store.read(STEP, {"id": nodes[-1], "rel": rel}):
                if row["id"] in nodes:
                    continue
                nxt.append((nodes + [row["id"]], names + [row["name"]], dirs + ["out" if row["out"] else "in"]))
        frontier = nxt[:limit]
    return [ReasoningPath(nodes=n, relations=list(relations), names=nm, directions=d, source="gold-walk")
            for n, nm, d in frontier]


def gold_prediction(store: GraphStore, record: dict, method: str = "gold-walk") -> Prediction:
    """Walk every gold relation path from the record's first topic entity; answers are the end nodes."""
    topic = record["q_entity"][0]
    paths: list[ReasoningPath] = []
    for k, rels in enumerate(record["ground_paths"]):
        for p in walk(store, topic, rels):
            p.score = round(1.0 / (1 + k) - 0.01 * len(paths), 4)
            paths.append(p)
    answers: dict[str, Answer] = {}
    for p in paths:
        a = answers.get(p.answer)
        if a is None:
            answers[p.answer] = Answer(text=p.answer_name, id=p.answer, score=p.score, paths=[p])
        else:
            a.paths.append(p)
            a.score = max(a.score, p.score)
    ranked = sorted(answers.values(), key=lambda a: -a.score)
    return Prediction(question_id=record["id"], answers=ranked, paths=paths, method=method,
                      cypher=[f"MATCH (t:Entity {{id: $topic}})-[:`{r[0]}`]-(x) RETURN x"
                              for r in record["ground_paths"][:1]])
