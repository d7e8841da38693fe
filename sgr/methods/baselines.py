"""Two methods that need no LLM, so the harness can be tested and every score has a frame.

* ``oracle-paths`` — an **upper bound** for path-following methods: it walks the dataset's *gold*
  relation paths (WebQSP ``ground_paths``; MetaQA's relation-path type, with directions) in Neo4j
  from the topic entities, and answers with every entity the walks end at, ranked by how many walks
  reach it. This is the "ground-truth relation path" oracle of RoG's analysis (Luo et al. 2024, §5.3):
  it tells how much of a dataset a method with perfect relation paths could answer in this graph.
  Directions: MetaQA's are known (heads are movies); WebQSP's path triples sometimes point against
  Freebase's direction, so each step is walked both ways there.
* ``neighbors`` — a **floor**: the topic entities' 1-hop neighbours, ranked by word overlap with the
  question. Each relation (with its direction) is scored by the question words it shares, the
  relation's last segment counting fully and its domain/type segments half
  (``location.country.languages_spoken``: ``languages spoken`` 1.0, ``location country`` 0.5);
  words match on their first four letters (a crude stemmer: *directed*/*director*, *written*/*writer*).
  The answers are the named neighbours reached by the best-scoring relations (all neighbours when no
  relation shares a word), ordered by the overlap of their own names with the question, then by name.

Both read through :meth:`sgr.graph.store.GraphStore.read` and are measured by :class:`sgr.methods.base.UsageMeter`
(stage timers, Neo4j queries and time on their own store; one store per worker thread in the runner). Their
options are typed (:class:`OraclePathsConfig`, :class:`NeighborsConfig`) and parsed by
:func:`sgr.methods.base.parse_options`, so an unknown ``-o`` key is refused.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from sgr.core.lexicon import OVERLAP_STOPWORDS
from sgr.methods.base import MethodContext, UsageMeter, accepts, parse_options
from sgr.retrieval.entities import EntityLinker
from sgr.graph.store import GraphStore
from sgr.core.types import Answer, Prediction, Question, ReasoningPath



def word_keys(text: str) -> set[str]:
    """Lower-case words of 3+ letters, stop words removed, cut to their first four letters."""
    return {w[:4] for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in OVERLAP_STOPWORDS}


def _topic_ids(store: GraphStore, question: Question) -> list[str]:
    keys = [*question.topic_mids, *question.topic_entities]
    found = EntityLinker(store).resolve(keys)
    return list(dict.fromkeys(i for k in keys for i in found.get(k, [])))


def path_pattern(length: int, directions: list[str] | None) -> str:
    """``(t)<-[:$($r0)]-(:Entity)-[:$($r1)]->(x)`` for a path of ``length`` relations given as
    parameters ``$r0 …`` (Neo4j 5.26 dynamic types, so one query plan serves every relation path of
    the same shape; a direction that is not ``out``/``in`` is walked both ways)."""
    parts = ["(t:Entity {id: $tid})"]
    for i in range(length):
        d = directions[i] if directions and i < len(directions) else "both"
        edge = f"[:$($r{i})]"
        arrow = {"out": f"-{edge}->", "in": f"<-{edge}-"}.get(d, f"-{edge}-")
        parts.append(arrow + ("(x:Entity)" if i == length - 1 else "(:Entity)"))
    return "".join(parts)


def walk_query(length: int, directions: list[str] | None) -> str:
    """Answers at the end of the path from topic ``$tid``: support (walk count) and one sample walk each.

    Walks of two or more steps that come back to a topic entity are dropped (MetaQA's multi-hop
    answers exclude the topic: the co-directors of X are not X); a one-step walk can only return to
    the topic through a self-loop, a real fact (the film *Lemmy* stars Lemmy), so it is kept."""
    return (f"MATCH p = {path_pattern(length, directions)} "
            + ("WHERE NOT x.id IN $topics " if length > 1 else "")
            + "WITH x, count(p) AS support, head(collect(p)) AS p "
            "RETURN x.id AS id, x.name AS name, support, "
            "[n IN nodes(p) | n.id] AS nodes, [n IN nodes(p) | n.name] AS names, "
            "[i IN range(0, size(relationships(p)) - 1) | "
            " CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'out' ELSE 'in' END] AS dirs "
            "ORDER BY support DESC, coalesce(x.name, x.id) LIMIT $cap")


@dataclass
class OraclePathsConfig:
    """Options of ``oracle-paths``."""

    answer_cap: int = 1000  # answers kept (also the row cap of each walk query)
    max_paths: int = 20  # reasoning paths reported


@dataclass
class OraclePaths:
    """Follow the gold relation paths from the topic entities (an upper bound; see module doc)."""

    store: GraphStore
    config: OraclePathsConfig = field(default_factory=OraclePathsConfig)
    name: str = field(default="oracle-paths")

    def answer(self, question: Question) -> Prediction:
        meter = UsageMeter(self.store)
        with meter.measure() as usage:
            with meter.stage("resolve"):
                topics = _topic_ids(self.store, question)
            with meter.stage("walk"):
                answers = self._walk(question, topics)
        top_paths = [a.paths[0] for a in answers[: self.config.max_paths] if a.paths]
        return Prediction(question_id=question.id, answers=answers, paths=top_paths, usage=usage, method=self.name,
                          extra={"topics_found": len(topics), "gold_paths": len(question.gold_paths)})

    def _walk(self, question: Question, topics: list[str]) -> list[Answer]:
        cap = self.config.answer_cap
        directions = question.extra.get("gold_directions") or []
        support: dict[str, float] = defaultdict(float)
        names: dict[str, str | None] = {}
        paths: dict[str, list[ReasoningPath]] = defaultdict(list)
        for pi, rels in enumerate(question.gold_paths):
            if not rels:
                continue
            dirs = directions[pi] if pi < len(directions) else None
            query = walk_query(len(rels), dirs)
            params = {f"r{i}": r for i, r in enumerate(rels)}
            for tid in topics:
                for row in self.store.read(query, {**params, "tid": tid, "topics": topics, "cap": cap}):
                    support[row["id"]] += row["support"]
                    names[row["id"]] = row["name"]
                    paths[row["id"]].append(ReasoningPath(
                        nodes=row["nodes"], relations=list(rels), score=float(row["support"]),
                        names=row["names"], directions=row["dirs"], source=self.name))
        ranked = sorted(support, key=lambda i: (-support[i], names[i] or i))[:cap]
        return [Answer(text=names[i] or i, id=i, score=support[i], paths=paths[i][:3]) for i in ranked]


NEIGHBOURS_QUERY = (
    "UNWIND $tids AS tid MATCH (t:Entity {id: tid})-[r]-(n:Entity) "
    "WHERE NOT type(r) STARTS WITH 'SGR_' AND NOT n.id IN $tids "
    "RETURN t.id AS tid, t.name AS tname, type(r) AS rel, startNode(r) = t AS out, "
    "n.id AS id, n.name AS name LIMIT $cap")


def relation_overlap(relation: str, question_keys: set[str]) -> float:
    """Words shared by the question and a relation: last segment 1.0 each, other segments 0.5 each."""
    segments = relation.split(".")
    last = word_keys(segments[-1].replace("_", " "))
    rest = word_keys(" ".join(segments[:-1]).replace("_", " ")) - last
    return len(last & question_keys) + 0.5 * len(rest & question_keys)


@dataclass
class NeighborsConfig:
    """Options of ``neighbors``."""

    neighbour_cap: int = 5000  # row cap of the neighbour query
    answer_cap: int = 1000  # answers kept
    max_paths: int = 20  # reasoning paths reported


@dataclass
class Neighbors:
    """Rank the topic entities' 1-hop neighbours by overlap with the question (a floor; see module doc)."""

    store: GraphStore
    config: NeighborsConfig = field(default_factory=NeighborsConfig)
    name: str = field(default="neighbors")

    def answer(self, question: Question) -> Prediction:
        meter = UsageMeter(self.store)
        with meter.measure() as usage:
            with meter.stage("resolve"):
                topics = _topic_ids(self.store, question)
            with meter.stage("neighbours"):
                rows = (self.store.read(NEIGHBOURS_QUERY, {"tids": topics, "cap": self.config.neighbour_cap})
                        if topics else [])
            with meter.stage("rank"):
                answers, best = self._rank(question, rows)
        return Prediction(question_id=question.id, answers=answers,
                          paths=[a.paths[0] for a in answers[: self.config.max_paths]], usage=usage,
                          method=self.name, extra={"topics_found": len(topics), "neighbours": len(rows),
                                                   "best_relation_score": best})

    def _rank(self, question: Question, rows: list[dict]) -> tuple[list[Answer], float]:
        topic_words = set().union(*(word_keys(n) for n in question.topic_entities)) if question.topic_entities else set()
        q_keys = word_keys(question.text) - topic_words
        rel_score = {r: relation_overlap(r, q_keys) for r in {row["rel"] for row in rows}}
        named = [row for row in rows if row["name"]]
        best = max((rel_score[row["rel"]] for row in named), default=0.0)
        chosen = [row for row in named if rel_score[row["rel"]] == best]

        by_id: dict[str, dict] = {}
        for row in chosen:
            by_id.setdefault(row["id"], row)
        name_score = {i: len(word_keys(r["name"]) & q_keys) for i, r in by_id.items()}
        ranked = sorted(by_id, key=lambda i: (-name_score[i], by_id[i]["name"]))[: self.config.answer_cap]
        answers = []
        for i in ranked:
            row = by_id[i]
            path = ReasoningPath(nodes=[row["tid"], i], relations=[row["rel"]], score=best + 0.25 * name_score[i],
                                 names=[row["tname"], row["name"]], directions=["out" if row["out"] else "in"],
                                 source=self.name)
            answers.append(Answer(text=row["name"], id=i, score=path.score, paths=[path]))
        return answers, best


@accepts(OraclePathsConfig)
def create_oracle_paths(ctx: MethodContext) -> OraclePaths:
    return OraclePaths(store=ctx.store, config=parse_options(OraclePathsConfig, ctx.options, method="oracle-paths"))


@accepts(NeighborsConfig)
def create_neighbors(ctx: MethodContext) -> Neighbors:
    return Neighbors(store=ctx.store, config=parse_options(NeighborsConfig, ctx.options, method="neighbors"))
