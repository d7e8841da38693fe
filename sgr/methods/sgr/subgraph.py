"""Schema-guided subgraph generation: G_q from the linked entities along R_q (SGR §3.1.2, eq. 4).

Expansion is a beam search over *schema paths* — relation-level walks ``(r1, d1), …, (rk, dk)`` from a seed
v0 ∈ V_q — with the entity-level walks p = (v0, r1, v1, …, rk, vk) they cover kept alongside (up to
``paths_per_answer`` per end node). Each round fetches the neighbours of every frontier node in one query.
Every relationship type is followed: R_q guides by the scores and the beam pruning, not by a hard filter, so a
relation ranked just below the top-k (or the second edge of a CVT) stays reachable. A CVT node (a name-less
compound value) never counts as a hop: ``Ohio -[representatives]-> (CVT) -[office_holder]-> John Kasich`` is
one hop.

Every schema path P ending on named nodes is scored (the paper names the three terms; the weights are
:class:`sgr.methods.sgr.config.ExpansionConfig` fields):

    s(P) = w_rel·relevance(P) + w_align·alignment(P) + w_con·constraints(P) − w_len·(hops(P) − 1)·(1 − order(P))

* relevance = (1 − α)·[½·mean_i s(r_i) + ½·cos(q, text(P))] + α·order(P): the relation scores of S_q, the
  cosine between the question and the path's relation texts, and — when the LLM ordered R_q — the longest
  common subsequence of P's relations and the LLM's order over max(|P|, |order|) (α = ``order_weight``);
* alignment = share of the other question entities on P's walks, minus 1 when an end node is named in the
  question;
* the length penalty prefers short paths (most questions are one hop, a CVT not counting) unless the path is
  the one the LLM ordered (order(P) = 1 lifts it);
* constraints = mean satisfaction of the checkable constraints of C_q (type: cosine between the expected answer
  type and the end role of the last relation; time: a walk passes a node naming the year).

The top ``beam`` schema paths are expanded further; the walks of the best ones, deduplicated and cut to
``top_n``, form G_q. The graph consistency of a walk is C(p, G_q) = exp(−(s* − s(p))/τ) with s* the best walk
score of G_q and τ = ``consistency_temperature`` (0 outside G_q).

With a learned path ranker (:mod:`sgr.methods.sgr.path_ranker`, ``path_ranker`` on) s(P) is its probability over
the same terms; the ranker was fitted on dev runs without the model's schema stage, so when the model ordered R_q
its order lifts a path as it does inside relevance: s(P) = (1 − α)·s_learned(P) + α·order(P).

Schema paths that walk one fact path under a relation's two names (:mod:`sgr.graph.inverses`: ``actor`` out of the
cast CVT, ``starring_roles`` into it) are one relation path: each gets the best score among them, so γ of an answer
stored under the other name is that of the path, not of the name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass, field

import numpy as np

from sgr.core.lexicon import asks_for_others, described_nouns, singular
from sgr.core.text import normalize as normalise
from sgr.graph.inverses import NO_INVERSES, InverseRelations
from sgr.methods.sgr.config import ExpansionConfig
from sgr.methods.sgr.path_ranker import PathRanker, load_path_ranker
from sgr.retrieval.entities import LinkedEntity, linked_names
from sgr.retrieval.hops import HOP_CLASSES, hop_class, length_penalty, load_hop_model
from sgr.methods.sgr.schema import QuestionSchema
from sgr.methods.sgr.word_relations import asking_words, load_word_relations
from sgr.graph.store import GraphStore, relation_text
from sgr.core.types import ReasoningPath

Step = tuple[str, str]


@dataclass
class SchemaPath:
    """A relation-level path from ``seed`` with the end nodes it reaches and their walks (node-id lists)."""

    seed: str
    steps: tuple[Step, ...]
    hops: int
    walks: dict[str, list[list[str]]] = field(default_factory=dict)  # end node id -> walks (v0 … vk)
    score: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def relations(self) -> list[str]:
        return [r for r, _ in self.steps]

    @property
    def answers(self) -> list[str]:
        return list(self.walks)

    def render(self, seed_name: str | None = None) -> str:
        out = seed_name or self.seed
        for r, d in self.steps:
            out += f" -[{r}]-> ?" if d == "out" else f" <-[{r}]- ?"
        return out


@dataclass
class Subgraph:
    """G_q: the kept schema paths, their top entity-level walks, names and CVT flags of the nodes seen."""

    schema_paths: list[SchemaPath]
    paths: list[ReasoningPath]
    names: dict[str, str | None]
    cvt: set[str]
    seeds: list[str]
    temperature: float = 0.1
    cost: dict[str, Any] = field(default_factory=dict)  # rows fetched, queries, whether the fetch budget cut it

    @property
    def max_score(self) -> float:
        return max((p.score for p in self.paths), default=0.0)

    def consistency(self, path: ReasoningPath) -> float:
        """C(p, G_q) = exp(−(s* − s(p))/τ) for a walk of G_q, 0 for a walk outside G_q."""
        from sgr.methods.sgr.reasoning import consistency

        key = (tuple(path.nodes), tuple(path.relations))
        for p in self.paths:
            if (tuple(p.nodes), tuple(p.relations)) == key:
                return consistency(p.score, self.max_score, self.temperature)
        return 0.0

    def paths_to(self, node_id: str) -> list[ReasoningPath]:
        return sorted((p for p in self.paths if p.answer == node_id), key=lambda p: -p.score)

    def path_consistency(self, node_id: str, relations: Sequence[str],
                         inverses: InverseRelations = NO_INVERSES) -> float:
        """γ on the answer's own path (eq. 10): C of the best walk of G_q with these relations ending on the node
        (a relation and its inverse count as one: :meth:`sgr.graph.inverses.InverseRelations.canonical`)."""
        from sgr.methods.sgr.reasoning import consistency

        want = inverses.canonical(relations)
        own = [p for p in self.paths_to(node_id) if inverses.canonical(p.relations) == want]
        return consistency(own[0].score, self.max_score, self.temperature) if own else 0.0

    def answer_consistency(self, node_id: str) -> float:
        """γ for an answer node: max C(p, G_q) over the walks of G_q that end on it (0 when none does)."""
        from sgr.methods.sgr.reasoning import consistency

        paths = self.paths_to(node_id)
        return consistency(paths[0].score, self.max_score, self.temperature) if paths else 0.0

    def nodes(self) -> list[dict]:
        ids: list[str] = []
        for p in self.paths:
            ids += [n for n in p.nodes if n not in ids]
        return [{"id": i, "name": self.names.get(i), "cvt": i in self.cvt, "seed": i in self.seeds} for i in ids]

    def edges(self) -> list[dict]:
        seen: set[tuple[str, str, str]] = set()
        out = []
        for p in self.paths:
            for h, r, t in p.triples():
                if (h, r, t) not in seen:
                    seen.add((h, r, t))
                    out.append({"source": h, "type": r, "target": t})
        return out


def lcs(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence."""
    if not a or not b:
        return 0
    dp = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            cur = dp[j]
            dp[j] = prev + 1 if x == y else max(dp[j], dp[j - 1])
            prev = cur
    return dp[-1]


def end_role_text(rel: str, direction: str) -> str:
    """What the end node of a step is: the property for ``out`` (``languages spoken``), the type for ``in``
    (``country`` of ``location.country.languages_spoken``); relation text when the name has no dots."""
    parts = rel.split(".")
    if len(parts) >= 3:
        return relation_text(parts[-1]) if direction == "out" else relation_text(parts[-2])
    return relation_text(rel) if direction == "out" else ""


def neighbourhood_relation_types(store: GraphStore, ids: Sequence[str], depth: int = 2, first_cap: int = 3000,
                                  second_cap: int = 400) -> list[str]:
    """Relationship types within ``depth`` (1 or 2) edges of the nodes ``ids``: the predicates that can connect
    the linked entities to answer nodes (SGR §3.1.1), from which R_q is ranked. Bounded samples on hubs."""
    if not ids:
        return []
    rows = store.read(
        "UNWIND $ids AS i MATCH (s:Entity {id: i}) "
        "CALL (s) { MATCH (s)-[r]-(m:Entity) RETURN type(r) AS t, m.id AS m, m:CVT AS cvt LIMIT $cap } "
        "RETURN t, m, cvt", {"ids": list(ids), "cap": first_cap})
    types = list(dict.fromkeys(r["t"] for r in rows if not r["t"].startswith("SGR_")))
    if depth >= 2 and rows:
        mids = [r["m"] for r in rows if r["cvt"]] + [r["m"] for r in rows if not r["cvt"]]
        mids = list(dict.fromkeys(mids))[:second_cap]
        more = store.relation_types_at(mids)
        types += list(dict.fromkeys(t for m in mids for t in more.get(m, [])[:100] if t not in types))
    return types


@dataclass
class _State:
    steps: tuple[Step, ...]
    hops: int
    frontier: dict[str, list[list[str]]]  # node id -> walks ending there
    in_cvt: bool
    score: float = 0.0


class SubgraphBuilder:
    """Builds G_q for a schema (see the module docstring). ``embed`` maps texts to unit vectors."""

    def __init__(self, store: GraphStore, embed: Callable[[Sequence[str]], np.ndarray],
                 relation_sim: Callable[[str, Sequence[str]], dict[str, float]] | None = None,
                 relation_vectors: Callable[[Sequence[str]], np.ndarray] | None = None) -> None:
        self.store = store
        self.embed = embed
        self.relation_sim = relation_sim
        self.relation_vectors = relation_vectors
        self._vecs: dict[str, np.ndarray] = {}

    def _vec(self, text: str) -> np.ndarray:
        if text not in self._vecs:
            self._vecs[text] = self.embed([text])[0]
        return self._vecs[text]

    def _embed_missing(self, texts: Sequence[str]) -> None:
        """Embed the ``texts`` not cached yet in one encoder call (a round's end roles: one call, not one each)."""
        todo = sorted({t for t in texts if t and t not in self._vecs})
        if todo:
            self._vecs.update(zip(todo, self.embed(todo)))

    # -- graph access ------------------------------------------------------------------------------
    def _neighbours(self, ids: Sequence[str], types: Sequence[str] | None, open_ids: Sequence[str],
                    cap: int) -> list[dict]:
        """Edges around ``ids``: all types for ``open_ids`` (CVT frontier nodes), ``types`` for the rest."""
        if not ids:
            return []
        return self.store.read(
            "UNWIND $ids AS i MATCH (a:Entity {id: i}) "
            "CALL (a, i) { MATCH (a)-[r]-(b:Entity) "
            "  WHERE NOT type(r) STARTS WITH 'SGR_' AND ($types IS NULL OR type(r) IN $types OR i IN $open) "
            "  RETURN type(r) AS rel, startNode(r) = a AS out, b.id AS dst, b.name AS name, b:CVT AS cvt "
            "  LIMIT $cap } "
            "RETURN i AS src, rel, out, dst, name, cvt",
            {"ids": list(ids), "types": list(types) if types is not None else None, "open": list(open_ids),
             "cap": cap})

    # -- scoring -------------------------------------------------------------------------------------
    def _relation_scores(self, schema: QuestionSchema, names: Sequence[str], question: str,
                         beta: float) -> dict[str, float]:
        out = {r.name: r.score for r in schema.relations}
        missing = [n for n in names if n not in out]
        if missing and self.relation_sim is not None:
            sims = self.relation_sim(question, missing)
            top = max((r.similarity for r in schema.relations), default=0.0) or max(sims.values(), default=1.0) or 1.0
            for n in missing:
                out[n] = (1 - beta) * max(0.0, sims.get(n, 0.0)) / top
        return out

    def build(self, schema: QuestionSchema, seeds: Sequence[LinkedEntity], cfg: ExpansionConfig, *,
              masked_question: str | None = None, beta: float = 0.5,
              inverses: InverseRelations = NO_INVERSES) -> Subgraph:
        """Expand from ``seeds`` and return G_q (``masked_question``: the question with the topic entity masked;
        ``inverses``: the graph's paired relation names, whose variants of one path share its best score)."""
        question = masked_question or schema.question
        hop_model = load_hop_model() if cfg.schema_guided else None  # P(h | q): a term of every path (parts)
        hop_dist = hop_model.distribution(question) if hop_model is not None else None
        ranker = load_path_ranker(depth=cfg.hops) if cfg.path_ranker and cfg.schema_guided else None
        names: dict[str, str | None] = {s.id: s.name for s in seeds}
        cvt: set[str] = set()
        scored: list[SchemaPath] = []
        qvec = self.embed([question])[0]
        # R_q guides by scores and beam pruning, not by a hard filter: a relation ranked just below the top-k
        # (or the second edge of a CVT) stays reachable.
        allowed = None
        other_entities = {s.id for s in seeds}
        qnorm = f" {normalise(schema.question)} "
        described = described_nouns(schema.question)  # composition's bridge nouns ("the author that …")
        lexicon = load_word_relations()
        qwords = asking_words(schema.question, linked_names(seeds))  # the words that ask for r_last
        others_asked = asks_for_others(schema.question)  # "other", "share", "co-star": a walk back may be asked for
        fetched, queries, truncated = 0, 0, False
        for seed in seeds:
            states = [_State((), 0, {seed.id: [[seed.id]]}, False)]
            for step in range(cfg.hops * 2):
                expandable = [s for s in states if s.hops < cfg.hops or s.in_cvt]
                if not expandable:
                    break
                if fetched >= cfg.fetch_budget:  # the bound on one question's expansion, hubs included
                    truncated = True
                    break
                frontier_ids = sorted({n for s in expandable for n in s.frontier})
                open_ids = sorted({n for s in expandable if s.in_cvt for n in s.frontier})
                rows = self._neighbours(frontier_ids, allowed, open_ids,
                                        cfg.seed_cap if step == 0 else cfg.node_cap)
                fetched, queries = fetched + len(rows), queries + 1
                by_src: dict[str, list[dict]] = {}
                for r in rows:
                    by_src.setdefault(r["src"], []).append(r)
                    names.setdefault(r["dst"], r["name"])
                    if r["cvt"]:
                        cvt.add(r["dst"])
                children: list[_State] = []
                for st in expandable:
                    groups: dict[tuple[str, str, bool], dict[str, list[list[str]]]] = {}
                    for node, walks in st.frontier.items():
                        for r in by_src.get(node, []):
                            dst = r["dst"]
                            if dst == seed.id:
                                continue
                            key = (r["rel"], "out" if r["out"] else "in", bool(r["cvt"]))
                            bucket = groups.setdefault(key, {})
                            if len(bucket) >= cfg.max_answers and dst not in bucket:
                                continue
                            have = bucket.setdefault(dst, [])
                            for w in walks:
                                if len(have) >= cfg.paths_per_answer:
                                    break
                                if dst not in w:
                                    have.append(w + [dst])
                            if not have:
                                del bucket[dst]
                    for (rel, d, is_cvt), frontier in groups.items():
                        if not frontier:
                            continue
                        steps = st.steps + ((rel, d),)
                        hops = st.hops + (0 if is_cvt else 1)
                        children.append(_State(steps, hops, frontier, is_cvt))
                if not children:
                    break
                round_rels = sorted({r for c in children for r, _ in c.steps})
                rel_scores = self._relation_scores(schema, round_rels, question, beta)
                word_scores = {r: lexicon.score(qwords, r) for r in round_rels} if lexicon else {}
                path_sims = self._path_similarities(children, qvec)
                if cfg.schema_guided:
                    self._embed_missing([c.value for c in schema.constraints if c.kind == "type" and c.value]
                                        + sorted(described) + [end_role_text(*c.steps[-1]) for c in children])
                finished: list[tuple[_State, SchemaPath]] = []
                for c, psim in zip(children, path_sims):
                    sp = SchemaPath(seed.id, c.steps, c.hops, c.frontier)
                    self._score(sp, schema, rel_scores, float(psim), other_entities - {seed.id}, qnorm, names, cfg,
                                ranker, hop_dist, described, word_scores, inverses, others_asked)
                    c.score = sp.score
                    if not c.in_cvt:
                        finished.append((c, sp))
                scored += [sp for _, sp in finished]
                children.sort(key=lambda s: -s.score)
                states = children[:cfg.beam]
        _share_scores_across_inverse_names(scored, inverses)
        scored.sort(key=lambda p: (-p.score, p.hops, p.steps))
        g = self._assemble(scored, names, cvt, [s.id for s in seeds], cfg)
        g.cost = {"rows_fetched": fetched, "queries": queries, "truncated": truncated, "hops": cfg.hops}
        return g

    def _path_similarities(self, children: Sequence[_State], qvec: np.ndarray) -> np.ndarray:
        """cos(q, text(P)): the question against the normalised sum of the path's relation-text embeddings (a
        cheap stand-in for embedding the concatenated texts; no encoder call per path)."""
        if self.relation_vectors is None:
            texts = [" ".join(relation_text(r) for r, _ in c.steps) for c in children]
            return self.embed(texts) @ qvec
        names = sorted({r for c in children for r, _ in c.steps})
        vecs = dict(zip(names, self.relation_vectors(names)))
        out = np.zeros(len(children), dtype=np.float32)
        for i, c in enumerate(children):
            v = np.sum([vecs[r] for r, _ in c.steps], axis=0)
            out[i] = float(v @ qvec / max(np.linalg.norm(v), 1e-12))
        return out

    def _score(self, sp: SchemaPath, schema: QuestionSchema, rel_scores: dict[str, float], path_sim: float,
               others: set[str], qnorm: str, names: dict[str, str | None], cfg: ExpansionConfig,
               ranker: PathRanker | None = None, hop_dist: dict[int, float] | None = None,
               described: set[str] | frozenset[str] = frozenset(),
               word_scores: dict[str, float] | None = None, inverses: InverseRelations = NO_INVERSES,
               others_asked: bool = False) -> None:
        """s(P) of one schema path: the learned ranker over its terms (:mod:`sgr.methods.sgr.path_ranker`) when one is
        given, else the hand-set sum of the module docstring; ``sp.parts`` records every term either way."""
        rels = sp.relations
        order = 0.0
        scores = [rel_scores.get(r, 0.0) for r in rels]
        if cfg.schema_guided:
            mean_rel = float(np.mean(scores)) if rels else 0.0
            base = 0.5 * mean_rel + 0.5 * max(0.0, path_sim)
            if schema.ordered:
                order = lcs(rels, schema.ordered) / max(len(rels), len(schema.ordered))
                relevance = (1 - cfg.order_weight) * base + cfg.order_weight * order
            else:
                relevance = base
        else:
            relevance = 0.0
        # entity alignment: the other linked entities on the walks; an end named in the question
        align = 0.0
        if others:
            hit = 0
            for walks in sp.walks.values():
                for w in walks:
                    hit = max(hit, len(others & set(w)))
            align = hit / len(others)
        named = [names.get(a) for a in sp.walks]
        named_end = 0.0
        if any(n and len(normalise(n)) > 2 and f" {normalise(n)} " in qnorm for n in named):
            named_end = -1.0 if len(named) == 1 else -0.5
        # constraints
        checks: list[float] = []
        type_check = 0.0
        if cfg.schema_guided:
            for c in schema.constraints:
                if c.kind == "type" and c.value:
                    role = end_role_text(*sp.steps[-1])
                    if role:
                        type_check = max(0.0, float(self._vec(c.value) @ self._vec(role)))
                        checks.append(type_check)
                elif c.kind == "time" and c.value:
                    ok = any(c.value in (names.get(n) or "") for walks in sp.walks.values() for w in walks for n in w)
                    checks.append(1.0 if ok else 0.0)
        con = float(np.mean(checks)) if checks else 0.0
        role = end_role_text(*sp.steps[-1])  # the path ends on an entity the question only describes: its bridge
        role_words = {singular(w) for w in role.split()}
        described_sim = max((max(0.0, float(self._vec(d) @ self._vec(role))) for d in described if role), default=0.0)
        p_hops = hop_dist.get(hop_class(sp.hops), 0.0) if hop_dist else 0.0
        sp.parts = {"relevance": relevance, "alignment": align + named_end, "constraints": con, "order": order,
                    "rel_mean": float(np.mean(scores)) if scores else 0.0, "rel_first": scores[0] if scores else 0.0,
                    "rel_last": scores[-1] if scores else 0.0, "rel_min": min(scores, default=0.0),
                    "path_sim": path_sim, "named_end": named_end, "type_check": type_check,
                    "hops1": float(sp.hops <= 1), "hops2": float(sp.hops == 2), "hops3": float(sp.hops >= 3),
                    "cvt_steps": float(len(sp.steps) - sp.hops), "p_hops": p_hops,
                    "p_hops_gap": length_penalty(sp.hops, hop_dist) if hop_dist else 0.0,
                    "log_answers": math.log1p(len(sp.walks)), "ends_on_linked": float(bool(others & set(sp.walks))),
                    "described_end": float(bool(described & role_words)), "described_sim": described_sim,
                    "lex_last": (word_scores or {}).get(rels[-1], 0.0) if rels else 0.0}
        canon = inverses.canonical(rels)  # the last relation walks back the one before it (either name of a pair)
        sp.parts["walks_back"] = float(len(canon) >= 2 and canon[-1] == canon[-2])
        sp.parts["walks_back_unasked"] = sp.parts["walks_back"] * (not others_asked)
        if ranker is not None:  # fitted without a model's order (dev runs had no schema stage): it lifts as in
            learned = ranker.score(sp.parts)  # relevance, s = (1 − α)·s_learned + α·order(P)
            sp.score = (1 - cfg.order_weight) * learned + cfg.order_weight * order if schema.ordered else learned
        else:
            sp.score = (cfg.w_rel * relevance + cfg.w_align * (align + named_end) + cfg.w_con * con
                        - cfg.w_len * max(0, sp.hops - 1) * (1.0 - order))

    def _assemble(self, scored: list[SchemaPath], names: dict[str, str | None], cvt: set[str],
                  seeds: list[str], cfg: ExpansionConfig) -> Subgraph:
        paths: list[ReasoningPath] = []
        seen: set[tuple] = set()
        floor = 1e-6
        for sp in scored:
            for end, walks in sorted(sp.walks.items(), key=lambda kv: (names.get(kv[0]) or kv[0])):
                if end in cvt:
                    continue
                for w in walks:
                    key = (tuple(w), sp.steps)
                    if key in seen:
                        continue
                    seen.add(key)
                    dirs = [d for _, d in sp.steps]
                    paths.append(ReasoningPath(nodes=list(w), relations=sp.relations, score=max(floor, sp.score),
                                               names=[names.get(n) for n in w], directions=dirs, source="subgraph"))
                    break  # one walk per (schema path, answer) in G_q; other walks stay on the SchemaPath
            if len(paths) >= cfg.top_n:  # whole schema paths only: the best one is always complete
                break
        return Subgraph(scored, paths, names, cvt, seeds, cfg.consistency_temperature)


def expansion_depth(cfg: ExpansionConfig, hop_dist: dict[int, float] | None) -> int:
    """G_q's depth: ``cfg.hops``, or the hop model's last class (three or more hops) when P(that class | q) is at
    least ``cfg.deeper_at`` — a question that asks for a far answer is expanded to reach it, the others are not
    (at three hops for every question, the farther distractors cost more compositions than they gain)."""
    deep = HOP_CLASSES[-1]
    if hop_dist and hop_dist.get(deep, 0.0) >= cfg.deeper_at:
        return max(cfg.hops, deep)
    return cfg.hops


def question_depth(cfg: ExpansionConfig, question: str, entity: str | None) -> int:
    """:func:`expansion_depth` of one question (its topic ``entity`` masked, as the hop model was fitted): decided
    once, after linking, by the answerer, so the model's relation paths (S_q) and G_q go equally deep;
    :meth:`SubgraphBuilder.build` expands the depth its config names."""
    from sgr.methods.sgr.exemplars import mask_entity

    model = load_hop_model() if cfg.schema_guided else None
    return expansion_depth(cfg, model.distribution(mask_entity(question, entity)) if model is not None else None)


def _share_scores_across_inverse_names(scored: Sequence[SchemaPath], inverses: InverseRelations) -> None:
    """Give the schema paths that are one relation path under paired names (module docstring) their best score."""
    if not inverses.pairs:
        return
    best: dict[tuple, float] = {}
    keys = [inverses.walk(sp.seed, sp.steps) for sp in scored]
    for key, sp in zip(keys, scored):
        best[key] = max(best.get(key, sp.score), sp.score)
    for key, sp in zip(keys, scored):
        sp.score = best[key]
