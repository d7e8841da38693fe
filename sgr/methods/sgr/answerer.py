"""The SGR answerer and its ablations, end to end against Neo4j (SGR §3, Fig. 1).

One question runs through these stages (each timed in ``Usage.stage_seconds``):

1. ``schema`` — S_q: candidate relations (embedding top-k of the graph's vocabulary), the LLM's ordered choice
   among them, constraints (:mod:`sgr.schema`, §3.1.1);
2. ``link`` — V_q: topic entities as given, else mentions → nodes (:mod:`sgr.linking`);
3. ``subgraph`` — G_q: scored paths from V_q along R_q (:mod:`sgr.subgraph`, §3.1.2);
4. ``cypher`` — direct reasoning: the model's Cypher with validation and repair (:mod:`cypher.translate`,
   :mod:`cypher.repair`), or the compiled best schema path as fallback (:mod:`cypher.compile`, §3.4.1);
5. ``validate`` — v_j = μδ_j + (1−μ)γ_j ≥ ε (§3.4.2); 6. ``collaborative`` — ω-weighted votes over M paths
   when nothing is valid (§3.5); 7. ``answer`` — optional answer text generated from the top paths.

Methods (``sgr eval --method`` / ``sgr ask --method``):

* ``sgr`` — the full method; ``sgr-direct`` — without the collaborative stage (nothing valid → no answer);
* ``sgr-no-schema`` — ablation without schema guidance (§4.3): no LLM schema, no R_q, expansion over every
  relation type, Cypher prompt without relation list or grammar, no constraints;
* ``cypher-only`` — NL→Cypher (with S_q, repairs) executed as is: no G_q, no validation, no fallback;
* ``llm-only`` — the model answers from its parameters (one call; answers carry no paths);
* ``sgr-compiled`` — no LLM at all: embedding schema, G_q, compiled best path (the deterministic baseline).

Every answer of the graph-based methods carries the paths that support it. :class:`SGRResult` holds the whole
trace (schema, links, G_q with nodes and edges, Cypher attempts, validation and votes, a Cypher statement that
redraws the evidence in Neo4j Browser) for ``sgr ask`` and the evidence view.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cypher.compile import CompiledQuery, compile_schema_path, cypher_literal
from cypher.repair import CypherGeneration, generate_cypher
from cypher.translate import (example_for, grammar_for, no_schema_messages, relation_endpoints,
                              translate_messages)
from sgr.core.errors import ConfigError, EntityNotFound, SgrError
from sgr.llm.client import shared_llm
from sgr.core.text import normalize as normalise
from sgr.retrieval.entities import EntityLinker, LinkedEntity
from sgr.methods.sgr.reasoning import (Candidate, SGRConfig, Vote, aggregate_votes, answer_messages, apply_answer_constraints,
                           delta_decides,
                           model_confidence, parse_answer_lines, select_answers, to_answers, validate_candidates)
from sgr.methods.sgr.schema import QuestionSchema, bracket_mentions, extract_schema
from sgr.retrieval.relations import RelationRetriever, ScoredRelation, load_retriever
from sgr.graph.store import GraphStore
from sgr.methods.sgr.subgraph import ExpansionConfig, Subgraph, SubgraphBuilder, neighbourhood_relation_types
from sgr.core.types import Answer, Prediction, Question, ReasoningPath, Usage

# ------------------------------------------------------------------------------------------------------------------
# shared, per-process resources (one store per worker thread, but graph-level caches are shared)
# ------------------------------------------------------------------------------------------------------------------
#: Who proposes the collaborative stage's paths (SGRConfig.path_retriever).
PATH_RETRIEVERS = ("schema", "scr", "schema+scr")
_LOCK = threading.Lock()
_EXEMPLARS: dict[tuple[str, str], Any] = {}


def shared_exemplars(store: GraphStore, graph_version: str, vocabulary: set[str]):  # noqa: ANN201
    """The :class:`sgr.methods.sgr.exemplars.ExemplarPool` for this graph (built once per graph version)."""
    from sgr.methods.sgr.exemplars import ExemplarPool

    key = (store.uri, graph_version)
    with _LOCK:
        if key not in _EXEMPLARS:
            _EXEMPLARS[key] = ExemplarPool.from_shared_data(vocabulary)
        return _EXEMPLARS[key]


class _Meter:
    """Counts the prompt/completion tokens of every LLM call of this thread, cache hits included
    (``LLM.take_usage`` counts tokens of real calls only), from ``LLM.last_call`` after each call."""

    def __init__(self) -> None:
        self._local = threading.local()

    def reset(self) -> None:
        self._local.prompt = 0
        self._local.completion = 0

    def add(self, llm: Any) -> None:
        rec = getattr(llm, "last_call", None)
        if rec is not None:
            self._local.prompt = getattr(self._local, "prompt", 0) + int(rec.prompt_tokens)
            self._local.completion = getattr(self._local, "completion", 0) + int(rec.completion_tokens)

    def totals(self) -> tuple[int, int]:
        return getattr(self._local, "prompt", 0), getattr(self._local, "completion", 0)


class MeteredLLM:
    """A thin proxy of :class:`sgr.llm.client.LLM` that feeds :class:`_Meter` after every public call."""

    def __init__(self, llm: Any, meter: _Meter) -> None:
        self._llm = llm
        self._meter = meter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def complete(self, *a: Any, **k: Any) -> str:
        out = self._llm.complete(*a, **k)
        self._meter.add(self._llm)
        return out

    def try_structured(self, *a: Any, **k: Any) -> Any:
        out = self._llm.try_structured(*a, **k)
        self._meter.add(self._llm)
        return out

    def structured(self, *a: Any, **k: Any) -> Any:
        out = self._llm.structured(*a, **k)
        self._meter.add(self._llm)
        return out

    def yes_no_logprobs(self, *a: Any, **k: Any) -> Any:
        out = self._llm.yes_no_logprobs(*a, **k)
        self._meter.add(self._llm)
        return out


# ------------------------------------------------------------------------------------------------------------------
# the trace
# ------------------------------------------------------------------------------------------------------------------
@dataclass
class SGRResult:
    """Everything one question went through; ``prediction`` is what ``sgr eval`` scores."""

    question: Question
    method: str
    prediction: Prediction
    config: SGRConfig
    entities: list[LinkedEntity] = field(default_factory=list)
    schema: QuestionSchema | None = None
    subgraph: Subgraph | None = None
    generation: CypherGeneration | None = None
    compiled: CompiledQuery | None = None
    cypher_source: str | None = None  # "llm" | "compiled" | None
    candidates: list[Candidate] = field(default_factory=list)
    votes: list[Vote] = field(default_factory=list)
    scr_paths: list[ReasoningPath] = field(default_factory=list)  # SCR's proposals (path_retriever "scr"…)
    generated_text: str | None = None

    @property
    def route(self) -> str | None:
        return self.prediction.route

    def evidence_triples(self) -> list[tuple[str, str, str]]:
        """Stored (head, relation, tail) triples of the answers' paths and the top paths."""
        seen: list[tuple[str, str, str]] = []
        for a in self.prediction.answers:
            for p in a.paths:
                seen += [t for t in p.triples() if t not in seen]
        for p in self.prediction.paths:
            seen += [t for t in p.triples() if t not in seen]
        return seen

    def evidence_nodes(self) -> list[dict[str, Any]]:
        names: dict[str, str | None] = {}
        for p in [p for a in self.prediction.answers for p in a.paths] + list(self.prediction.paths):
            for n, nm in zip(p.nodes, p.names or [None] * len(p.nodes)):
                names.setdefault(n, nm)
        answers = {a.id for a in self.prediction.answers}
        seeds = {e.id for e in self.entities}
        return [{"id": i, "name": nm, "answer": i in answers, "seed": i in seeds} for i, nm in names.items()]

    def evidence_edges(self) -> list[dict[str, str]]:
        return [{"source": h, "type": r, "target": t} for h, r, t in self.evidence_triples()]

    def evidence_cypher(self) -> str:
        """A statement to paste into Neo4j Browser that redraws the evidence subgraph."""
        triples = self.evidence_triples()
        if not triples:
            ids = [e.id for e in self.entities]
            return f"MATCH (n:Entity) WHERE n.id IN {cypher_literal(ids)} RETURN n"
        rows = ", ".join(cypher_literal([h, r, t]) for h, r, t in triples)
        return (f"UNWIND [{rows}] AS t\n"
                "MATCH (h:Entity {id: t[0]})-[r]->(x:Entity {id: t[2]}) WHERE type(r) = t[1]\n"
                "RETURN h, r, x")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready view (``sgr ask --json``)."""
        pred = self.prediction
        gen = self.generation
        return {
            "question": self.question.text,
            "method": self.method,
            "route": pred.route,
            "error": pred.error,
            "answers": [{"text": a.text, "id": a.id, "score": round(a.score, 4),
                         "paths": [{"text": p.render(), "score": round(p.score, 4), "nodes": p.nodes,
                                    "relations": p.relations, "directions": p.directions} for p in a.paths]}
                        for a in pred.answers],
            "entities": [dataclasses.asdict(e) | {"relation_types": e.relation_types[:10]} for e in self.entities],
            "schema": None if self.schema is None else {
                "relations": [{"name": r.name, "score": round(r.score, 4), "similarity": round(r.similarity, 4),
                               "picked_rank": r.picked_rank} for r in self.schema.relations],
                "ordered": self.schema.ordered, "constraints": [dataclasses.asdict(c) for c in self.schema.constraints],
                "mentions": self.schema.mentions, "source": self.schema.source, "exemplars": self.schema.exemplars},
            "cypher": {
                "source": self.cypher_source,
                "ran": pred.cypher,
                "attempts": [] if gen is None else [
                    {"reply": a.reply, "query": a.query, "ok": a.ok, "rows": None if a.rows is None else len(a.rows),
                     "problems": [dataclasses.asdict(p) for p in a.problems], "error": a.error} for a in gen.attempts],
                "repairs": 0 if gen is None else gen.repairs,
            },
            "validation": [{"answer": c.text, "gamma": round(c.gamma, 4), "delta": round(c.delta, 4),
                            "delta_source": c.delta_source, "v": round(c.v, 4), "valid": c.valid}
                           for c in self.candidates[:50]],
            "votes": [{"answer": v.text, "support": round(v.support, 4), "paths": len(v.paths)} for v in self.votes[:20]],
            "top_paths": [{"text": p.render(), "score": round(p.score, 4)} for p in pred.paths],
            "scr_paths": [{"text": p.render(), "probability": round(p.score, 4)} for p in self.scr_paths],
            "subgraph": None if self.subgraph is None else {
                "schema_paths": [{"path": sp.render(self.subgraph.names.get(sp.seed)), "score": round(sp.score, 4),
                                  "answers": len(sp.walks), **{k: round(v, 4) for k, v in sp.parts.items()}}
                                 for sp in self.subgraph.schema_paths[:10]],
                "nodes": len(self.subgraph.nodes()), "edges": len(self.subgraph.edges())},
            "generated_text": self.generated_text,
            "usage": dataclasses.asdict(pred.usage),
            "evidence_cypher": self.evidence_cypher(),
            "extra": pred.extra,
        }


# ------------------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------------------
def row_values(rows: Sequence[dict[str, Any]]) -> list[tuple[str | None, str]]:
    """(node id or None, text) of the first column of each row; nodes give (id, name), lists are flattened."""
    out: list[tuple[str | None, str]] = []

    def add(v: Any) -> None:
        if v is None:
            return
        if isinstance(v, dict):
            if "id" in v or "name" in v:
                out.append((v.get("id"), str(v.get("name") or v.get("id"))))
            return
        if isinstance(v, (list, tuple)):
            for x in v:
                add(x)
            return
        out.append((None, str(v)))

    for row in rows:
        if not row:
            continue
        first = row.get("answer", next(iter(row.values())))
        add(first)
    seen: set[tuple[str | None, str]] = set()
    return [x for x in out if not (x in seen or seen.add(x))]


def ground_by_shortest_path(store: GraphStore, seeds: Sequence[str], targets: Sequence[str],
                            max_len: int = 4) -> dict[str, ReasoningPath]:
    """A shortest undirected path from some seed to each target node (for answers found outside G_q)."""
    if not seeds or not targets:
        return {}
    rows = store.read(
        "UNWIND $targets AS tid MATCH (x:Entity {id: tid}) "
        "CALL (x) { UNWIND $seeds AS sid MATCH (s:Entity {id: sid}) "
        f"  MATCH p = shortestPath((s)-[*..{int(max_len)}]-(x)) RETURN p ORDER BY length(p) LIMIT 1 }} "
        "RETURN x.id AS id, [n IN nodes(p) | n.id] AS ids, [n IN nodes(p) | n.name] AS names, "
        "[r IN relationships(p) | type(r)] AS rels, "
        "[i IN range(0, size(relationships(p)) - 1) | "
        "  CASE WHEN startNode(relationships(p)[i]) = nodes(p)[i] THEN 'out' ELSE 'in' END] AS dirs",
        {"targets": list(targets)[:50], "seeds": list(seeds)})
    return {r["id"]: ReasoningPath(nodes=r["ids"], relations=r["rels"], score=0.0, names=r["names"],
                                   directions=r["dirs"], source="shortest-path") for r in rows}


def schema_text(schema: QuestionSchema | None, max_relations: int = 3) -> str | None:
    if schema is None or not schema.relations:
        return None
    rels = schema.ordered or schema.relation_names[:max_relations]
    return " -> ".join(dict.fromkeys(rels[:max_relations]))


# ------------------------------------------------------------------------------------------------------------------
# the answerer
# ------------------------------------------------------------------------------------------------------------------
class SGRAnswerer:
    """SGR (or one of its ablations, by ``config``) as an :class:`sgr.core.types.Answerer`."""

    def __init__(self, store: GraphStore, llm: Any = None, config: SGRConfig | None = None, *, name: str = "sgr",
                 retriever: Any = None, exemplars: Any = None) -> None:
        self.store = store
        self.config = config or SGRConfig()
        self.name = name
        self._meter = _Meter()
        self.llm = MeteredLLM(llm, self._meter) if llm is not None else None
        self.graph_version = store.graph_version()
        self.embedding_retriever = load_retriever(store, "cosine")
        self.retriever: RelationRetriever = retriever if retriever is not None else self.embedding_retriever
        self.vocabulary = self.embedding_retriever.vocabulary
        if exemplars is None and self.config.exemplars and self.llm is not None:
            exemplars = shared_exemplars(store, self.graph_version, self.vocabulary)
        self.exemplars = exemplars
        self.linker = EntityLinker(store)
        from sgr.llm.encoders import embed_texts

        self.builder = SubgraphBuilder(store, lambda texts: embed_texts(list(texts)),
                                       self.embedding_retriever.score_of, self.embedding_retriever.vectors)

    # -- Answerer -------------------------------------------------------------------------------------------------
    def answer(self, question: Question) -> Prediction:
        try:
            return self.run(question).prediction
        except EntityNotFound as exc:
            return Prediction(question_id=question.id, method=self.name, error=str(exc))

    # -- the pipeline ---------------------------------------------------------------------------------------------
    def _expansion(self) -> ExpansionConfig:
        c = self.config
        return ExpansionConfig(hops=c.hops, beam=c.beam, top_n=c.top_n, paths_per_answer=c.paths_per_answer,
                               max_answers=c.max_answers, schema_guided=c.schema_guided, w_rel=c.w_rel,
                               w_align=c.w_align, w_con=c.w_con, w_len=c.w_len, w_fan=c.w_fan, order_weight=c.order_weight,
                               temperature=c.consistency_temperature)

    def run(self, question: Question) -> SGRResult:
        """Answer ``question`` and return the full trace (raises EntityNotFound when nothing links)."""
        cfg = self.config
        usage = Usage()
        t_start = time.perf_counter()
        q0, s0 = self.store.query_count, self.store.query_seconds
        if self.llm is not None:
            self.llm.take_usage()
        self._meter.reset()
        result = SGRResult(question=question, method=self.name,
                           prediction=Prediction(question_id=question.id, method=self.name), config=cfg)
        try:
            self._run(question, result, usage)
        finally:
            pred = result.prediction
            if self.llm is not None:
                u = self.llm.take_usage()
                prompt, completion = self._meter.totals()
                usage.llm_calls = u.calls
                usage.prompt_tokens = max(prompt, u.prompt_tokens)
                usage.completion_tokens = max(completion, u.completion_tokens)
                usage.llm_seconds = u.seconds
                pred.extra["llm_cached_calls"] = u.cached
                pred.extra["llm_calls_by_stage"] = dict(u.by_stage)
            usage.neo4j_queries = self.store.query_count - q0
            usage.neo4j_seconds = self.store.query_seconds - s0
            usage.total_seconds = time.perf_counter() - t_start
            pred.usage = usage
        return result

    def _run(self, question: Question, result: SGRResult, usage: Usage) -> None:
        cfg = self.config
        pred = result.prediction
        topics = list(question.topic_entities) or list(question.topic_mids)
        use_llm_schema = cfg.use_llm_schema and cfg.schema_guided and self.llm is not None

        # 1. V_q: given topics, bracketed mentions or question spans (ties broken by relation similarity)
        t = time.perf_counter()
        global_scores = {r.name: r.score for r in self.retriever.retrieve(question.text, 50)}
        mentions = bracket_mentions(question.text)
        entities = self.linker.link_question(question.text, mentions, topics=topics, relation_scores=global_scores)
        usage.add_stage("link", time.perf_counter() - t)
        if not entities and use_llm_schema:  # ask the model for the mentions (schema stage with entities)
            t = time.perf_counter()
            probe = extract_schema(question.text, retriever=self.retriever, llm=self.llm, k=cfg.top_k_relations,
                                   beta=cfg.beta, max_relations=2, need_mentions=True, stage="schema-entities")
            mentions = probe.mentions
            entities = [e for e in (self.linker.link_mention(m, global_scores) for m in mentions) if e is not None]
            usage.add_stage("schema", time.perf_counter() - t)
        result.entities = entities
        if not entities:
            raise EntityNotFound(f"no graph node matches the question's entities "
                                 f"({', '.join(topics or mentions) or 'none recognised in the text'}): "
                                 "name one with --topic")
        pred.extra["linked"] = [{"mention": e.mention, "id": e.id, "method": e.method} for e in entities]
        entity_name = entities[0].label

        # 2. S_q: candidate relations among the predicates around V_q, the LLM's choice, constraints
        t = time.perf_counter()
        among = neighbourhood_relation_types(self.store, [e.id for e in entities], depth=min(2, cfg.hops))
        schema = extract_schema(
            question.text, retriever=self.retriever, llm=self.llm if use_llm_schema else None, entity=entity_name,
            exemplars=self.exemplars if cfg.exemplars else None, k=cfg.top_k_relations, beta=cfg.beta,
            max_relations=max(2, min(4, 2 * cfg.hops)), n_examples=cfg.n_examples, among=among)
        schema.mentions = [e.mention for e in entities]
        if not cfg.schema_guided:
            schema.relations, schema.ordered, schema.constraints = [], [], []
        result.schema = schema
        usage.add_stage("schema", time.perf_counter() - t)

        # 3. G_q
        if cfg.use_subgraph:
            t = time.perf_counter()
            from sgr.methods.sgr.exemplars import mask_entity

            masked = mask_entity(question.text, entity_name)
            anchors: list[str] = []
            if cfg.anchor_entities and cfg.schema_guided:
                seed_ids = {x.id for x in entities}
                anchors = [x.id for x in self.linker.verbatim_mentions(question.text)
                           if x.id not in seed_ids and normalise(x.label) not in {normalise(t.label) for t in entities}]
                pred.extra["anchors"] = anchors
            result.subgraph = self.builder.build(schema, entities, self._expansion(), masked_question=masked,
                                                 beta=cfg.beta, anchors=anchors)
            usage.add_stage("subgraph", time.perf_counter() - t)
            pred.paths = [p for p in result.subgraph.paths[:10]]
        if "scr" in cfg.path_retriever:  # SCR's beam search proposes paths too (they vote if direct reasoning fails)
            t = time.perf_counter()
            result.scr_paths = self._scr_paths(question, result)
            usage.add_stage("scr", time.perf_counter() - t)

        # 4. direct reasoning: A_c
        t = time.perf_counter()
        cands = self._direct_candidates(question, result)
        usage.add_stage("cypher", time.perf_counter() - t)

        # 5. validation (A_v)
        if cfg.validate_answers and result.subgraph is not None:
            t = time.perf_counter()
            valid = self._validate(question, result, cands)
            usage.add_stage("validate", time.perf_counter() - t)
        else:
            for c in cands:
                c.valid, c.v = True, 1.0
            valid = cands
        result.candidates = cands
        if valid:
            pred.answers = to_answers(valid, "v", cfg.paths_per_answer)
            pred.route = "direct"
        elif cfg.collaborative and result.subgraph is not None and (result.subgraph.paths
                                                                   or cfg.path_retriever != "schema"):
            t = time.perf_counter()
            chosen = self._collaborate(question, result)
            usage.add_stage("collaborative", time.perf_counter() - t)
            pred.answers = to_answers(chosen, "support", cfg.paths_per_answer)
            pred.route = "collaborative" if chosen else None
        if cfg.answer_constraints and cfg.schema_guided and result.schema is not None and pred.answers:
            pred.answers, notes = apply_answer_constraints(pred.answers, result.schema.constraints)
            if notes:
                pred.extra["constraints_applied"] = notes
        # 7. optional answer text from the top paths
        if cfg.generate_answers and self.llm is not None and pred.answers:
            t = time.perf_counter()
            self._generate(question, result)
            usage.add_stage("answer", time.perf_counter() - t)

    # -- direct reasoning ----------------------------------------------------------------------------------------
    def _direct_candidates(self, question: Question, result: SGRResult) -> list[Candidate]:
        cfg = self.config
        pred = result.prediction
        schema, g, entities = result.schema, result.subgraph, result.entities
        values: list[tuple[str | None, str]] = []
        if cfg.use_llm_cypher and self.llm is not None:
            gen = self._llm_cypher(question, schema, entities)
            result.generation = gen
            final = gen.final
            if final is not None:
                pred.cypher.append(final.query)
                values = row_values(final.rows or [])
                if values:
                    result.cypher_source = "llm"
        cands: list[Candidate] = []
        if values:
            cands = self._candidates_from_values(values, result)
        if not cands and cfg.compiled_fallback and g is not None and g.schema_paths:
            best = g.schema_paths[0]
            compiled = compile_schema_path(best.seed, best.steps, limit=cfg.max_answers,
                                           paths_per_answer=cfg.paths_per_answer)
            result.compiled = compiled
            rows = self.store.run_generated(compiled.cypher, compiled.params).rows
            pred.cypher.append(compiled.inline())
            result.cypher_source = "compiled"
            for r in rows:
                paths = [ReasoningPath(nodes=ids, relations=best.relations, score=best.score, names=names,
                                       directions=[d for _, d in best.steps], source="compiled")
                         for ids, names in zip(r["path_ids"], r["path_names"])]
                cands.append(Candidate(r["id"], r["name"] or r["id"], paths))
        return cands

    def _llm_cypher(self, question: Question, schema: QuestionSchema, entities: list[LinkedEntity]) -> CypherGeneration:
        cfg = self.config
        names = [e.name for e in entities if e.name]
        entity = names[0] if names else None
        if cfg.schema_guided and schema.relations:
            rels = list(dict.fromkeys(schema.ordered + schema.relation_names))[:6]
            endpoints = relation_endpoints(self.store, rels, self.graph_version)
            ex = None
            if self.exemplars is not None and cfg.exemplars:
                near = self.exemplars.nearest(question.text, 1, entity)
                ex = near[0][0] if near else None
            msgs = translate_messages(question.text, entity, endpoints, example_for(rels, ex))
            grammar = (grammar_for(rels, names, max(1, min(5, cfg.hops))) if getattr(self.llm, "constrained", False)
                       else None)
            allowed = rels
        else:
            msgs, grammar, allowed = no_schema_messages(question.text, entity), None, None
        return generate_cypher(self.llm, msgs, store=self.store, vocabulary=self.vocabulary, grammar=grammar,
                               max_repairs=cfg.max_repairs, allowed=allowed, max_tokens=cfg.cypher_max_tokens)

    def _candidates_from_values(self, values: list[tuple[str | None, str]], result: SGRResult) -> list[Candidate]:
        """Map Cypher result values to nodes and attach their paths (from G_q, else a shortest path)."""
        g = result.subgraph
        by_name: dict[str, list[str]] = {}
        if g is not None:
            for nid, nm in g.names.items():
                if nm:
                    by_name.setdefault(nm, []).append(nid)
        ids: list[tuple[str, str]] = []
        unknown = [text for nid, text in values if nid is None and text not in by_name]
        found: dict[str, list[str]] = {}
        if unknown:
            for r in self.store.read("UNWIND $names AS n MATCH (e:Entity {name: n}) RETURN n, e.id AS id LIMIT 2000",
                                     {"names": unknown[:500]}):
                found.setdefault(r["n"], []).append(r["id"])
        for nid, text in values:
            if nid is not None:
                ids.append((nid, text))
            else:
                for i in by_name.get(text, []) or found.get(text, []):
                    ids.append((i, text))
        cands: list[Candidate] = []
        missing: list[str] = []
        for nid, text in dict.fromkeys(ids):
            paths = g.paths_to(nid) if g is not None else []
            cands.append(Candidate(nid, text, paths))
            if not paths:
                missing.append(nid)
        if missing:
            grounded = ground_by_shortest_path(self.store, [e.id for e in result.entities], missing,
                                               max_len=max(2, 2 * self.config.hops))
            for c in cands:
                if not c.paths and c.key in grounded:
                    c.paths = [grounded[c.key]]
        # an answer is grounded or dropped
        return [c for c in cands if c.paths]

    def _validate(self, question: Question, result: SGRResult, cands: list[Candidate]) -> list[Candidate]:
        cfg = self.config
        g = result.subgraph
        assert g is not None
        stext = schema_text(result.schema)
        verified: dict[tuple[str, ...], tuple[float, str]] = {}
        calls = 0
        for c in cands:
            c.gamma = g.answer_consistency(c.key)
            c.delta, c.delta_source = cfg.prior_confidence, "prior"
        for c in sorted(cands, key=lambda c: -c.gamma):
            if not c.paths:
                continue
            if cfg.lazy_verification and not delta_decides(c.gamma, cfg.mu, cfg.epsilon):
                continue
            pattern = tuple(c.paths[0].relations)
            if pattern not in verified:
                if calls >= cfg.max_verify_calls or self.llm is None:
                    continue
                verified[pattern] = model_confidence(self.llm, question.text, c.paths[0], stext,
                                                     prior=cfg.prior_confidence, stage="verify")
                calls += 1
            c.delta, c.delta_source = verified[pattern]
        return validate_candidates(cands, cfg.mu, cfg.epsilon)

    # -- collaborative reasoning -------------------------------------------------------------------------------
    def _collaborate(self, question: Question, result: SGRResult) -> list[Vote]:
        cfg = self.config
        g = result.subgraph
        assert g is not None
        paths = sorted(g.paths, key=lambda p: -p.score)[:cfg.M] if cfg.path_retriever != "scr" else []
        etas = [g.consistency(p) for p in paths]
        scr = result.scr_paths
        stext = schema_text(result.schema)
        patterns = list(dict.fromkeys(tuple(p.relations) for p in paths))
        rho_of: dict[tuple[str, ...], float] = {}
        if len(patterns) > 1 and self.llm is not None:
            calls = 0
            for pat in patterns:
                if calls >= cfg.max_verify_calls:
                    break
                rep = next(p for p in paths if tuple(p.relations) == pat)
                rho_of[pat], src = model_confidence(self.llm, question.text, rep, stext,
                                                    prior=cfg.prior_confidence, stage="verify")
                calls += src == "logprobs"
        rhos = [rho_of.get(tuple(p.relations), cfg.prior_confidence) for p in paths]
        # SCR's paths: ρ = their probability P(a, p | q); η = graph consistency with G_q (the walk itself when G_q
        # has it, else the best walk of G_q reaching the same answer; 0 when G_q does not reach it).
        rhos += [p.score for p in scr]
        etas += [max(g.consistency(p), g.answer_consistency(p.answer)) for p in scr]
        paths = paths + scr
        votes = aggregate_votes(paths, rhos, etas, cfg.lam)
        result.votes = votes
        return select_answers(votes, cfg.answer_ratio)

    def _scr_paths(self, question: Question, result: SGRResult) -> list[ReasoningPath]:
        """SCR's top-K paths from the linked entities (beam search over the same store)."""
        from sgr.methods.scr.method import scr_paths

        topics = [e.id for e in result.entities]
        return scr_paths(self.store, question, topics, k=self.config.scr_beam,
                         checkpoint=self.config.scr_checkpoint or None) if topics else []

    # -- answer generation -------------------------------------------------------------------------------------
    def _generate(self, question: Question, result: SGRResult) -> None:
        pred = result.prediction
        paths = [p for a in pred.answers for p in a.paths[:1]] + [p for p in pred.paths if p not in pred.answers]
        text = self.llm.complete(answer_messages(question.text, paths), stage="answer", max_tokens=80)
        result.generated_text = text
        index = {normalise(a.text): a for a in pred.answers}
        chosen: list[Answer] = []
        for line in parse_answer_lines(text):
            a = index.get(normalise(line))
            if a is not None and a not in chosen:
                chosen.append(a)
        if chosen:  # grounded lines only; keep the rest after them
            pred.answers = chosen + [a for a in pred.answers if a not in chosen]


class LLMOnlyAnswerer:
    """``llm-only``: the model answers from its parameters (no graph; the answers carry no paths)."""

    SYSTEM = "You answer questions about the world. Write the answers only, one per line. No other text."
    EXAMPLE = ("what does jamaican people speak?", "Jamaican English\nJamaican Creole English Language")

    def __init__(self, llm: Any, name: str = "llm-only") -> None:
        self.meter = _Meter()
        self.llm = MeteredLLM(llm, self.meter)
        self.name = name

    def answer(self, question: Question) -> Prediction:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        t0 = time.perf_counter()
        self.llm.take_usage()
        self.meter.reset()
        msgs = [SystemMessage(self.SYSTEM), HumanMessage(f"Question: {self.EXAMPLE[0]}\nAnswers:"),
                AIMessage(self.EXAMPLE[1]), HumanMessage(f"Question: {question.text}\nAnswers:")]
        text = self.llm.complete(msgs, stage="answer", max_tokens=60)
        answers = [Answer(text=line, score=1.0 / (i + 1)) for i, line in enumerate(parse_answer_lines(text)[:10])]
        u = self.llm.take_usage()
        prompt, completion = self.meter.totals()
        usage = Usage(llm_calls=u.calls, prompt_tokens=max(prompt, u.prompt_tokens),
                      completion_tokens=max(completion, u.completion_tokens), llm_seconds=u.seconds,
                      total_seconds=time.perf_counter() - t0)
        usage.add_stage("answer", usage.total_seconds)
        return Prediction(question_id=question.id, answers=answers, usage=usage, method=self.name, route="llm",
                          extra={"generated_text": text, "llm_cached_calls": u.cached})


# ------------------------------------------------------------------------------------------------------------------
# method variants and factories (registered in sgr/methods.py)
# ------------------------------------------------------------------------------------------------------------------
VARIANTS: dict[str, dict[str, Any]] = {
    "sgr": {},
    "sgr-direct": {"collaborative": False},
    "sgr-no-verify": {"max_verify_calls": 0},
    "sgr-no-schema": {"schema_guided": False, "use_llm_schema": False},
    "cypher-only": {"use_subgraph": False, "validate_answers": False, "collaborative": False,
                    "compiled_fallback": False},
    "sgr-compiled": {"use_llm_schema": False, "use_llm_cypher": False},
}
#: the variants that call the LLM (for the schema or for Cypher), and llm-only
NEEDS_LLM = {v for v, o in VARIANTS.items() if o.get("use_llm_schema", True) or o.get("use_llm_cypher", True)} | {
    "llm-only"}


def config_from_options(variant: str, options: dict[str, Any] | None = None) -> SGRConfig:
    """SGRConfig of a variant, with options (``hops``, ``max_repairs``, any field name) applied on top."""
    cfg = SGRConfig(**VARIANTS[variant])
    fields = {f.name: f for f in dataclasses.fields(SGRConfig)}
    for key, value in (options or {}).items():
        k = key.replace("-", "_")
        if k in fields and value is not None:
            typ = type(getattr(cfg, k))
            if isinstance(value, str) and typ is bool:
                value = value.strip().lower() in ("1", "true", "yes", "on")
            try:
                setattr(cfg, k, value if isinstance(value, typ) else typ(value))
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"option {key}={value!r}: expected {typ.__name__}") from exc
    if cfg.path_retriever not in PATH_RETRIEVERS:
        raise ConfigError(f"path_retriever (--retriever) must be one of {', '.join(PATH_RETRIEVERS)}, "
                          f"not {cfg.path_retriever!r}")
    return cfg


def create(variant: str, ctx: Any) -> Any:
    """Build a variant for ``ctx`` (:class:`sgr.methods.registry.MethodContext`); the LLM comes from ctx or the settings."""
    options = dict(getattr(ctx, "options", {}) or {})
    llm = getattr(ctx, "llm", None)
    if llm is None and variant in NEEDS_LLM:
        llm = shared_llm(cache=bool(options.get("llm_cache", True)))
    if variant == "llm-only":
        return LLMOnlyAnswerer(llm)
    cfg = config_from_options(variant, options)
    retriever = options.get("relation_retriever")
    if retriever is None:  # RCR's trained heads when `sgr relations train` made some for this graph (RCR issue)
        from sgr.retrieval.training import find_model

        retriever = "auto" if find_model(ctx.store.graph_version()) is not None else "embedding"
    if isinstance(retriever, str):  # "embedding" (plain MiniLM cosine), "auto" / "cosine" / a model of sgr.retrieval.relations
        if retriever in ("", "embedding"):
            retriever = None
        else:
            from sgr.retrieval.relations import load_retriever

            retriever = load_retriever(ctx.store, retriever)
    return SGRAnswerer(ctx.store, llm if variant in NEEDS_LLM else None, cfg, name=variant, retriever=retriever)


def make_sgr(ctx: Any) -> Any:
    return create("sgr", ctx)


def make_sgr_direct(ctx: Any) -> Any:
    return create("sgr-direct", ctx)


def make_sgr_no_verify(ctx: Any) -> Any:
    return create("sgr-no-verify", ctx)


def make_sgr_no_schema(ctx: Any) -> Any:
    return create("sgr-no-schema", ctx)


def make_cypher_only(ctx: Any) -> Any:
    return create("cypher-only", ctx)


def make_llm_only(ctx: Any) -> Any:
    return create("llm-only", ctx)


def make_sgr_compiled(ctx: Any) -> Any:
    return create("sgr-compiled", ctx)


__all__ = ["SGRAnswerer", "SGRResult", "LLMOnlyAnswerer", "SGRConfig", "create", "SgrError"]
