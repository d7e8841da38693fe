"""RCR: relation-centric reasoning over the Neo4j graph (RCR paper §4, Algorithm 1 in App. A.2).

Four stages per question, each timed by :class:`sgr.methods.base.UsageMeter` (``Usage.stage_seconds``):

1. ``relations`` — **relation retrieval** (§4.1): the top ``K_r`` relations of the graph's vocabulary for the
   question, from :mod:`sgr.retrieval.relations` (the trained dual encoder when one exists for this graph, else plain cosine).
2. ``paths`` — **relation-path generation** (§4.2): the LLM composes relation paths ``(r1, …, rl)`` from the
   retrieved candidates only, prompted with the template of App. A.3 (Figure 3). Decoding is constrained by a GBNF
   grammar (:func:`relation_path_grammar`) whose only terminals are the retrieved relation names, so every
   generated relation is a retrieved one. The paper decodes with beam search (beam 4 on WebQSP, 6 on CWQ); an
   OpenAI-style endpoint has no beam search, so the model writes up to ``beam`` paths, one per line, in one call
   (the grammar admits 1..``beam`` lines) and duplicates are dropped. The paper instruction-tunes its LLM on
   (question, entity, candidates) → gold path (§4.2.2, eq. 4); a local model is not fine-tuned here, so the
   nearest training questions (WebQSP train / MetaQA dev, never test) are shown as worked examples in exactly that
   training format — their gold paths among their own candidates (gold relations plus retrieved ones, §4.2.2).
   With tuned weights served — the shipped path generator or an ``sgr llm tune`` model — the stage asks in the
   format they were tuned on instead (``path_prompt``, :mod:`sgr.methods.rcr.paths`): SGR's schema prompt, its
   ``path: r1 > r2`` reply decoded as SGR decodes it, under the grammar of the relation paths that exist from the
   linked topics (``path_grammar``; ``relations``: a grammar over the same retrieved candidates instead).
3. ``walk`` — **path-guided subgraph retrieval** (§4.3, eq. 5): each path is followed from the topic entity; at
   step ``t`` the frontier ``E_{t−1}`` is expanded along ``r_t`` (edges are walked in either stored direction). When
   no frontier entity has an ``r_t`` edge, ``r_t`` is replaced by the ``K_s`` relations most similar to it (cosine
   in the retriever's relation space) among those the frontier does have (**similarity-based relation
   substitution**; ``K_s = 1`` by default, ``0`` disables it, §5.3.3). The union of walked triples is the evidence
   subgraph ``G_q``. Algorithm 1's ``Select(E_t)`` keeps the whole frontier, capped at ``frontier_cap`` entities.
4. ``answer`` — **answer generation** (§4.4): the LLM reads the question and the linearised reasoning paths of
   ``G_q`` (topic → … → endpoint) and lists the answers, with RoG's answer prompt (the paper generates answers with
   RoG, §5.1). A grammar restricts the reply to names of path endpoints, so every answer is grounded in ``G_q``.

That is two LLM calls per question, as in the paper (§2.2: "only two LLM calls during inference").
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from sgr.core.errors import EntityNotFound
from sgr.core.text import gbnf_literal, normalize, parse_answer_lines
from sgr.graph.store import GraphStore, quote_identifier
from sgr.core.types import Answer, Prediction, Question, ReasoningPath
from sgr.methods.base import UsageMeter, accepts, llm_cache_option, parse_options
from sgr.methods.rcr.paths import (PATH_DEPTHS, PATHS_LINE, RELATION_PATH_PROMPT, PathExample,  # noqa: F401
                                   PathExamplePool, check_option, generate_relation_paths, graph_schema_paths,
                                   parse_relation_paths, path_messages, relation_path_grammar, schema_path_grammar,
                                   schema_relation_paths, uses_graph_grammar, uses_schema_prompt)
from sgr.retrieval.relations import CosineRelationRetriever, ScoredRelation, load_retriever

#: RoG's answer-generation prompt (Luo et al. 2024), the generator RCR uses (§5.1).
ANSWER_PROMPT = (
    "Based on the reasoning paths, please answer the given question. Please keep the answer as simple as "
    "possible and return all the possible answers as a list, one per line.\n"
    "\n"
    "Reasoning Paths:\n{paths}\n"
    "\n"
    "Question:\n{question}"
)


#: RCRConfig.answer's values
ANSWER_MODES = ("auto", "llm", "support")


@dataclass
class RCRConfig:
    """RCR's knobs; paper values in brackets (§5.1, §5.3). ``path_prompt``: ``rcr`` — the A.3 prompt with worked
    examples; ``schema`` — SGR's schema prompt (:mod:`sgr.methods.sgr.prompts`), the one the shipped path generator
    and ``sgr llm tune``'s models were tuned on, with as many worked examples as their provenance names; ``auto`` —
    ``schema`` when the model is tuned weights (:func:`sgr.llm.server.is_tuned`), else ``rcr``. ``answer``: ``llm`` —
    the model picks the answers among G_q's endpoints (§4.4); ``support`` — no call: those that meet two or more
    linked topics first, then in the order of the number of walked relation paths that reach them, of the first path
    (the beam's order) that does, and of the relations that link them to the topics (:func:`support_order`);
    ``auto`` — ``support`` with the schema prompt (tuned weights learnt to write paths, not to answer), else ``llm``.
    ``path_grammar``: ``relations`` — the reply may combine any retrieved candidate relations (§4.2); ``graph`` —
    only relation paths that exist from the linked topics, as SGR decodes its schema call (schema prompt only);
    ``auto`` — ``graph`` with the schema prompt, else ``relations`` (chosen on dev questions:
    bench/experiments/models.md). ``given_topics``: off, the topics are linked from the question's text alone, as
    ``sgr ask`` without ``--topic`` does; ``bench/confidence.py`` calibrates RCR so (a calibrator fitted on given
    topics reads every answer linked from the text as suspect)."""

    candidates: int = 30  # K_r, relations retrieved and shown to the LLM [200; a 135M model's context is short]
    beam: int = 4  # paths per question [4 on WebQSP, 6 on CWQ]
    max_hops: int = 3  # longest path the grammar admits [WebQSP ≤ 2, CWQ ≤ 4 hops]
    substitutions: int = 1  # K_s of the similarity-based substitution [1; 0 disables]
    examples: int = 1  # worked examples (nearest training questions) in the path prompt [0: fine-tuned model]
    example_candidates: int = 8  # candidate relations shown with an example (its gold ones + retrieved ones)
    frontier_cap: int = 100  # entities kept per step of a walk (Algorithm 1's Select)
    edge_cap: int = 2000  # edges read per step of a walk
    answer_paths: int = 40  # reasoning paths shown to the answer generator
    max_answers: int = 10  # answers the generator may list
    path_tokens: int = 160  # completion budget of the path call
    answer_tokens: int = 160  # completion budget of the answer call
    relation_model: str = "auto"  # the relation retriever: a heads file, "auto" (trained if any) or "cosine"
    path_prompt: str = "auto"  # rcr (App. A.3) | schema (SGR's, what the shipped generator learnt) | auto (see below)
    path_grammar: str = "auto"  # relations (any path over the K_r candidates) | graph (paths at the topics) | auto
    graph_paths: int = 150  # the paths at the topics the graph grammar admits, the retriever's first
    path_depth: str = "question"  # the graph grammar's depth: question (SGR's hop model, ≤ max_hops) | max (max_hops)
    answer: str = "auto"  # llm (§4.4's answer call) | support (no call; see below) | auto (see below)
    given_topics: bool = True  # link the given topics (a dataset's, --topic); off: from the text, as `sgr ask` does


# ---------------------------------------------------------------------------------------------
# stage 3: path-guided subgraph retrieval with substitution
# ---------------------------------------------------------------------------------------------
@dataclass
class WalkStep:
    """One step of a walk: the relation asked for, the relations actually followed, and what they reached."""

    relation: str
    used: list[str]
    substituted: bool
    edges: int
    reached: int


@dataclass
class PathWalk:
    """A relation path followed from the topic entities (Algorithm 1, lines 4–19)."""

    path: tuple[str, ...]
    steps: list[WalkStep] = field(default_factory=list)
    endpoints: list[str] = field(default_factory=list)  # entity ids reached at the last step

    @property
    def complete(self) -> bool:
        return len(self.steps) == len(self.path) and bool(self.endpoints)

    @property
    def substituted(self) -> bool:
        return any(s.substituted for s in self.steps)

    @property
    def walked(self) -> tuple[str, ...]:
        """The relations followed (the first used relation of each step)."""
        return tuple(s.used[0] for s in self.steps if s.used)


@dataclass
class EvidenceSubgraph:
    """G_q (eq. 5): walked triples as stored (head, relation, tail), node names, and back-pointers for paths."""

    topics: list[str]
    triples: set[tuple[str, str, str]] = field(default_factory=set)
    names: dict[str, str | None] = field(default_factory=dict)
    walks: list[PathWalk] = field(default_factory=list)
    # (walk index, step, node) -> [(previous node, relation, direction)]
    back: dict[tuple[int, int, str], list[tuple[str, str, str]]] = field(default_factory=dict)

    def endpoints(self) -> dict[str, list[int]]:
        """Entity ids reached at the end of complete walks → the walks reaching them."""
        out: dict[str, list[int]] = {}
        for i, w in enumerate(self.walks):
            if w.complete:
                for e in w.endpoints:
                    out.setdefault(e, []).append(i)
        return out

    def paths_to(self, node: str, walk: int, limit: int = 3) -> list[ReasoningPath]:
        """Up to ``limit`` reasoning paths topic → … → ``node`` along walk ``walk``. A walk that comes back to a node
        it passed (a relation, then its inverse: school → alumni's CVTs → school) is shown with the loop erased: the
        path from the node's first visit, which is a path of the graph too."""
        steps = len(self.walks[walk].steps)
        partial: list[tuple[list[str], list[str], list[str]]] = [([node], [], [])]
        for t in range(steps - 1, -1, -1):
            nxt: list[tuple[list[str], list[str], list[str]]] = []
            for nodes, rels, dirs in partial:
                for prev, rel, d in self.back.get((walk, t, nodes[0]), [])[:limit]:
                    if prev in nodes:  # erase the loop prev → … → prev
                        i = nodes.index(prev)
                        cand = (nodes[i:], rels[i:], dirs[i:])
                    else:
                        cand = ([prev, *nodes], [rel, *rels], [d, *dirs])
                    if cand not in nxt:
                        nxt.append(cand)
                    if len(nxt) >= limit:
                        break
                if len(nxt) >= limit:
                    break
            partial = nxt
        return [ReasoningPath(nodes=n, relations=r, directions=d, names=[self.names.get(x) for x in n],
                              source="rcr") for n, r, d in partial if len(n) > 1 and n[0] in self.topics]


def relations_at(store: GraphStore, ids: Sequence[str]) -> list[str]:
    """Relationship types incident to the entities ``ids`` (either direction; sgr's own SGR_* types excluded),
    from the first :data:`~sgr.graph.store.HUB_EDGE_SAMPLE` edges of each."""
    return sorted({t for types in store.relation_types_at(ids).values() for t in types})


def follow(store: GraphStore, ids: Sequence[str], relation: str, cap: int) -> list[dict[str, Any]]:
    """Edges of type ``relation`` at ``ids`` (either direction): rows ``{h, t, name, out}``, at most ``cap``."""
    return store.read(
        f"UNWIND $ids AS i MATCH (h:Entity {{id: i}})-[r:{quote_identifier(relation)}]-(t:Entity) "
        "RETURN h.id AS h, t.id AS t, t.name AS name, startNode(r) = h AS out LIMIT $cap",
        {"ids": list(ids), "cap": int(cap)})


def support_order(meets: dict[str, tuple[int, int]], named: dict[str, str | None],
                  ends: dict[str, list[int]]) -> list[str]:
    """The endpoints ``named`` in the order of ``answer="support"`` (:class:`RCRConfig`): first those that meet two
    or more of the linked topics (by an edge or through a CVT; a conjunction's answer meets each entity the question
    names — "what Oceania country is the birthplace of Vicki Buck?"), the more the earlier; then by the number of
    walked relation paths that reach them (``ends``), by the first of those paths (the beam's order), by how many
    relations link them to the topics, and by name. ``meets`` holds each endpoint's (links, topics met) as
    :meth:`~sgr.graph.store.GraphStore.topic_meetings` reads them. The join was chosen on CWQ dev questions no weights
    trained on (``bench/experiments/models.md``)."""

    def key(n: str) -> tuple[int, int, int, int, str]:
        links, met = meets.get(n, (0, 0))
        return -(met if met >= 2 else 0), -len(ends[n]), min(ends[n]), -links, named[n] or ""

    return sorted(named, key=key)


def answer_signals(g: EvidenceSubgraph, ranked: Sequence[tuple[str, Sequence[ReasoningPath]]],
                   linked: Sequence[Any], path_scores: Sequence[float], question: str = "",
                   met: int = 0) -> dict[str, float]:
    """The numbers RCR's confidence is calibrated on (:mod:`sgr.methods.confidence`), under SGR's names for the same
    quantities: the share of the walked relation paths that reach the top answer and its lead over the next answer's
    (``vote_share``, ``vote_margin``, ``ev_votes_top``), how the topic was linked (``link_score``, ``link_given``), how
    well the top answer's path matches the question: the relation retriever's mean and last scores of its relations
    (``gq_rel_mean``, ``gq_rel_last``; ``path_scores`` holds them in the path's order), whether two or more entities
    were linked and
    the top answer meets fewer than two of them (``ev_unjoined``; ``met`` is how many it meets,
    :meth:`~sgr.graph.store.GraphStore.topic_meetings`), and the question's length in words / 10 (``q_words``: on dev
    questions RCR's answers to long, compositional ones are right less often at the same walks)."""
    ends = g.endpoints()
    support = [len(ends.get(node, ())) for node, _ in ranked]
    first = linked[0] if linked else None
    return {
        "vote_share": support[0] / max(1, len(g.walks)) if support else 0.0,
        "vote_margin": (support[0] - support[1]) / support[0] if len(support) > 1 and support[0] else
        float(bool(support)),
        "ev_votes_top": math.log1p(support[0]) if support else 0.0,
        "link_given": float(first is not None and first.method in ("given", "mid")),
        "link_score": float(first.score) if first is not None else 0.0,
        "gq_rel_mean": sum(path_scores) / len(path_scores) if path_scores else 0.0,
        "gq_rel_last": float(path_scores[-1]) if path_scores else 0.0,
        "ev_unjoined": float(len({e.id for e in linked}) > 1 and met < 2) if support else 0.0,
        "q_words": len(question.split()) / 10,
    }


def path_guided_subgraph(store: GraphStore, topics: Sequence[str], paths: Sequence[Sequence[str]], retriever: Any,
                         substitutions: int = 1, frontier_cap: int = 100, edge_cap: int = 2000,
                         topic_names: dict[str, str | None] | None = None) -> EvidenceSubgraph:
    """Algorithm 1 (lines 3–20) in Neo4j: follow each relation path from the topic entities, substituting a
    relation missing at the frontier by its ``substitutions`` most similar present ones
    (``retriever.similar_relations``), and collect the walked triples into G_q (eq. 5)."""
    g = EvidenceSubgraph(topics=list(topics), names=dict(topic_names or {}))
    topic_set = set(topics)
    for path in paths:
        walk = PathWalk(path=tuple(path))
        wi = len(g.walks)
        g.walks.append(walk)
        frontier = list(dict.fromkeys(topics))
        for t, rel in enumerate(path):
            if not frontier:
                break
            rows = follow(store, frontier, rel, edge_cap)
            used, substituted = [rel], False
            if not rows:  # Algorithm 1, line 7: no (e_{t-1}, r_t, *) in G
                used, substituted = [], True
                if substitutions > 0:
                    present = relations_at(store, frontier)
                    similar = retriever.similar_relations(rel, present, substitutions)
                    used = [r for r, _ in similar]
                    rows = []
                    for r in used:
                        rows += [dict(row, rel=r) for row in follow(store, frontier, r, edge_cap)]
            rows = [row if "rel" in row else dict(row, rel=rel) for row in rows]
            reached: list[str] = []
            for row in rows:
                h, tail, r = row["h"], row["t"], row["rel"]
                g.triples.add((h, r, tail) if row["out"] else (tail, r, h))
                g.names.setdefault(tail, row["name"])
                g.back.setdefault((wi, t, tail), []).append((h, r, "out" if row["out"] else "in"))
                reached.append(tail)
            reached = [e for e in dict.fromkeys(reached) if e not in topic_set]  # never walk back to e_0
            walk.steps.append(WalkStep(relation=rel, used=used, substituted=substituted, edges=len(rows),
                                       reached=len(reached)))
            frontier = reached[:frontier_cap]
        if len(walk.steps) == len(path):
            walk.endpoints = frontier
    return g


# ---------------------------------------------------------------------------------------------
# stage 4: answers
# ---------------------------------------------------------------------------------------------
def answer_grammar(names: Sequence[str], max_answers: int) -> str:
    """GBNF: 1..``max_answers`` lines, each one of ``names`` (endpoint names of the evidence subgraph)."""
    alts = list(dict.fromkeys(n for n in names if n))
    if not alts:
        raise ValueError("answer_grammar needs at least one name")
    more = ""
    for _ in range(max_answers - 1):
        more = f'("\\n" ans {more})?' if more else '("\\n" ans)?'
    return f"root ::= ans {more}".rstrip() + "\nans ::= " + " | ".join(gbnf_literal(n) for n in alts) + "\n"


def answer_messages(question: str, path_lines: Sequence[str]) -> list[BaseMessage]:
    return [HumanMessage(ANSWER_PROMPT.format(paths="\n".join(path_lines), question=question))]


# ---------------------------------------------------------------------------------------------
# the answerer
# ---------------------------------------------------------------------------------------------
class RCRAnswerer:
    """RCR as an :class:`sgr.core.types.Answerer` (see the module docstring)."""

    def __init__(self, store: GraphStore, llm: Any, retriever: Any = None, config: RCRConfig | None = None, *,
                 name: str = "rcr", examples: PathExamplePool | None = None) -> None:
        from sgr.retrieval.entities import EntityLinker

        self.store = store
        self.llm = llm
        self.config = config or RCRConfig()
        self.name = name
        self.retriever: CosineRelationRetriever = (retriever if retriever is not None
                                                   else load_retriever(store, self.config.relation_model))
        self.schema_prompt = uses_schema_prompt(self.config.path_prompt, getattr(llm, "name", None))
        check_option("answer", self.config.answer, ANSWER_MODES)
        check_option("path_depth", self.config.path_depth, PATH_DEPTHS)
        self.answer_by_support = self.config.answer == "support" or (self.config.answer == "auto" and self.schema_prompt)
        self.graph_grammar = uses_graph_grammar(self.config.path_grammar, self.schema_prompt)
        self.schema_shots = 0
        if self.schema_prompt:  # the tuned model's own prompt: as many worked examples as it was tuned with
            from sgr.llm.server import tuned_provenance

            self.schema_shots = int(tuned_provenance(getattr(llm, "name", "") or "").get("prompt_examples") or 0)
        elif examples is None and self.config.examples > 0:
            examples = _shared_examples(store, set(self.retriever.relations))
        self.examples = examples
        self._schema_pool: Any = None
        self.linker = EntityLinker(store)

    # -- stages ------------------------------------------------------------------------------
    def candidates(self, question: str) -> list[ScoredRelation]:
        return self.retriever.retrieve(question, self.config.candidates)

    def _example_turns(self, question: str) -> list[tuple[str, str, list[str], list[tuple[str, ...]]]]:
        cfg = self.config
        if not self.examples or cfg.examples <= 0:
            return []
        out = []
        for ex in self.examples.nearest(question, cfg.examples):
            gold = list(dict.fromkeys(r for p in ex.paths for r in p))
            extra = [r.name for r in self.retriever.retrieve(ex.question, cfg.example_candidates) if r.name not in gold]
            cands = (gold + extra)[:max(cfg.example_candidates, len(gold))]
            random.Random(ex.question).shuffle(cands)  # gold relations must not always come first
            out.append((ex.question, ex.entity or "(the entity in the question)", cands, list(ex.paths)))
        return out

    def _schema_examples(self, question: str, topics: Sequence[str]) -> list[Any]:
        """The nearest training questions as SGR's worked examples (only when the tuned model learnt with some)."""
        if self.schema_shots <= 0:
            return []
        if self._schema_pool is None:
            from sgr.methods.sgr.exemplars import ExemplarPool

            self._schema_pool = ExemplarPool.from_shared_data(set(self.retriever.relations))
        return [ex.worked() for ex, _ in self._schema_pool.nearest(question, self.schema_shots,
                                                                   topics[0] if topics else None)]

    def generate_paths(self, question: str, entity: str, candidates: Sequence[str],
                       topics: Sequence[str] = (), topic_ids: Sequence[str] = ()) -> tuple[list[tuple[str, ...]], str]:
        """(paths, raw reply) of the relation-path call (§4.2): in SGR's schema format for tuned weights
        (``path_prompt``), under the graph grammar at ``topic_ids`` (``path_grammar``) or one over ``candidates``;
        else the A.3 prompt with worked examples for this question."""
        if self.graph_grammar:
            return graph_schema_paths(self.llm, self.store, self.retriever, question, topic_ids,
                                      list(topics) or [entity], self.config, self._schema_examples(question, topics))
        if self.schema_prompt:
            return schema_relation_paths(self.llm, question, list(topics) or [entity], candidates, self.config,
                                         self._schema_examples(question, topics))
        return generate_relation_paths(self.llm, question, entity, candidates, self.config,
                                       self._example_turns(question))

    def generate_answers(self, question: str, g: EvidenceSubgraph
                         ) -> tuple[list[tuple[str, list[ReasoningPath]]], str, dict[str, tuple[int, int]] | None]:
        """Ranked (endpoint id, its paths) chosen by the LLM from G_q's endpoints (§4.4), the raw reply, and the
        endpoints' topic meetings when the support order read them (:func:`support_order`; None otherwise)."""
        cfg = self.config
        ends = g.endpoints()
        paths_of: dict[str, list[ReasoningPath]] = {}
        for node, walks in ends.items():
            for wi in walks:
                for path in g.paths_to(node, wi, limit=2):
                    path.score = len(walks) / max(1, len(g.walks))  # share of relation paths reaching the node
                    paths_of.setdefault(node, []).append(path)
        named = {n: g.names.get(n) for n in paths_of if paths_of[n] and g.names.get(n)}
        if not named:
            return [], "", None
        if self.answer_by_support:
            meets = self.store.topic_meetings(g.topics, sorted(named))
            return [(n, paths_of[n]) for n in support_order(meets, named, ends)[:cfg.max_answers]], "", meets
        # support = number of walks reaching the endpoint: the order in which paths are shown
        order = sorted(named, key=lambda n: (-len(ends[n]), named[n] or ""))
        lines: list[str] = []
        for n in order:
            for p in paths_of[n][:1]:
                lines.append(p.render())
            if len(lines) >= cfg.answer_paths:
                break
        shown = order[:len(lines)]
        by_name: dict[str, list[str]] = {}
        for n in shown:
            by_name.setdefault(normalize(named[n] or ""), []).append(n)
        grammar = answer_grammar([named[n] or "" for n in shown], cfg.max_answers)
        text = self.llm.complete(answer_messages(question, lines), stage="rcr-answer", grammar=grammar,
                                 max_tokens=cfg.answer_tokens)
        ranked: list[str] = []
        for line in parse_answer_lines(text):
            for n in by_name.get(normalize(line), []):
                if n not in ranked:
                    ranked.append(n)
        return [(n, paths_of[n]) for n in ranked[:cfg.max_answers]], text, None

    # -- Answerer ----------------------------------------------------------------------------
    def answer(self, question: Question) -> Prediction:
        """Answer one question; its usage comes from :class:`sgr.methods.base.UsageMeter` (cached LLM calls
        counted as every method counts them)."""
        pred = Prediction(question_id=question.id, method=self.name)
        meter = UsageMeter(self.store, self.llm)
        with meter.measure() as usage:
            try:
                self._answer(question, pred, meter)
            except EntityNotFound as exc:
                pred.error = str(exc)
        pred.usage = usage
        return pred

    def _link(self, question: Question) -> list[Any]:
        from sgr.methods.sgr.schema import bracket_mentions

        topics = (list(question.topic_entities) or list(question.topic_mids)) if self.config.given_topics else []
        linked = self.linker.link_question(question.text, bracket_mentions(question.text), topics=topics)
        if not linked:
            raise EntityNotFound(f"no graph node matches the question's entities "
                                 f"({', '.join(topics) or 'none recognised in the text'}): name one with --topic")
        return linked

    def _answer(self, question: Question, pred: Prediction, meter: UsageMeter) -> None:
        cfg = self.config
        with meter.stage("link"):
            linked = self._link(question)
        topic_ids = [e.id for e in linked]
        entity = ", ".join(e.label for e in linked)
        with meter.stage("relations"):
            names = [r.name for r in self.candidates(question.text)]
        with meter.stage("paths"):
            paths, raw = self.generate_paths(question.text, entity, names, [e.label for e in linked], topic_ids)
        with meter.stage("walk"):
            g = path_guided_subgraph(self.store, topic_ids, paths, self.retriever, substitutions=cfg.substitutions,
                                     frontier_cap=cfg.frontier_cap, edge_cap=cfg.edge_cap,
                                     topic_names={e.id: e.name for e in linked})
        with meter.stage("answer"):
            ranked, answer_raw, meets = self.generate_answers(question.text, g)

        n = len(ranked)
        pred.answers = [Answer(text=g.names.get(node) or node, id=node, score=float(n - i), paths=ps)
                        for i, (node, ps) in enumerate(ranked)]
        seen: set[tuple[str, ...]] = set()
        for a in pred.answers:
            for p in a.paths:
                key = tuple(p.nodes)
                if key not in seen:
                    seen.add(key)
                    pred.paths.append(p)
        pred.route = "substituted" if any(w.substituted for w in g.walks) else "exact"
        top_relations = [r for p in (ranked[0][1][:1] if ranked else []) for r in p.relations]
        scores = self.retriever.score_of(question.text, top_relations)
        top, topics = (ranked[0][0] if ranked else None), list(dict.fromkeys(topic_ids))
        if meets is None and top and len(topics) > 1:  # the support order did not read them
            meets = self.store.topic_meetings(topics, [top])
        met = (meets or {}).get(top, (0, 0))[1] if top and len(topics) > 1 else 0
        pred.extra["signals"] = answer_signals(g, ranked, linked, [scores[r] for r in top_relations], question.text,
                                               met)
        if not pred.answers:
            pred.error = ("the answer generator chose no endpoint" if answer_raw
                          else "no relation path reached a named entity")
        pred.extra.update({
            "topic": topic_ids,
            "candidates": names,
            "relation_paths": [list(p) for p in paths],
            "walked_paths": [list(w.walked) for w in g.walks if w.complete],
            "substitutions": [{"path": list(w.path), "step": i, "relation": s.relation, "used": s.used}
                              for w in g.walks for i, s in enumerate(w.steps) if s.substituted],
            "evidence_triples": len(g.triples),
            "path_reply": raw,
            "path_prompt": "schema" if self.schema_prompt else "rcr",
            "path_grammar": "graph" if self.graph_grammar else "relations",
            "answer_reply": answer_raw,
            "answered_by": "support" if self.answer_by_support else "llm",
            "k_s": cfg.substitutions,
        })


# ---------------------------------------------------------------------------------------------
# registry factories (sgr/methods/registry.py)
# ---------------------------------------------------------------------------------------------
_POOLS: dict[tuple[str, int], PathExamplePool] = {}
_POOL_LOCK = threading.Lock()


def _shared_examples(store: GraphStore, vocabulary: set[str]) -> PathExamplePool:
    key = (store.uri, hash(frozenset(vocabulary)))
    with _POOL_LOCK:
        if key not in _POOLS:
            _POOLS[key] = PathExamplePool.from_shared_data(vocabulary)
        return _POOLS[key]


#: Options the factory reads besides RCRConfig's fields (a retriever object, from Python).
RCR_FACTORY_OPTIONS = frozenset({"relation_retriever"})


def create(ctx: Any, substitutions: int | None = None, name: str = "rcr") -> RCRAnswerer:
    """Build RCR for a :class:`sgr.methods.base.MethodContext`: ``-o`` options are :class:`RCRConfig`'s fields
    (an unknown one is a ConfigError); ``relation_retriever`` (a retriever object, from Python) replaces the one
    ``relation_model`` names. ``rcr-ks0``/``rcr-ks2`` fix ``substitutions``."""
    options = dict(getattr(ctx, "options", {}) or {})
    retriever = options.get("relation_retriever")
    cfg = parse_options(RCRConfig, options, method=name, extra_keys=RCR_FACTORY_OPTIONS)
    if substitutions is not None:
        cfg.substitutions = substitutions
    llm = getattr(ctx, "llm", None)
    if llm is None:
        from sgr.llm.client import shared_llm

        llm = shared_llm(cache=llm_cache_option(options, "rcr"))
    return RCRAnswerer(ctx.store, llm, retriever, cfg, name=name)


@accepts(RCRConfig, RCR_FACTORY_OPTIONS)
def make_rcr(ctx: Any) -> RCRAnswerer:
    return create(ctx)


@accepts(RCRConfig, RCR_FACTORY_OPTIONS)
def make_rcr_ks0(ctx: Any) -> RCRAnswerer:
    return create(ctx, substitutions=0, name="rcr-ks0")


@accepts(RCRConfig, RCR_FACTORY_OPTIONS)
def make_rcr_ks2(ctx: Any) -> RCRAnswerer:
    return create(ctx, substitutions=2, name="rcr-ks2")
