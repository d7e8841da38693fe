"""The SGR answerer and its ablations, end to end against Neo4j (Zhang et al., SGR §3, Fig. 1).

:class:`SGRAnswerer` answers one question in stages, one method each, timed by :class:`sgr.methods.base.UsageMeter`
(``Usage.stage_seconds``):

1. ``link`` — V_q: topic entities as given, else mentions → nodes (:mod:`sgr.retrieval.entities`);
2. ``schema`` — S_q: relations around V_q, the model's ordered pick, C_q (:mod:`sgr.methods.sgr.schema`, §3.1.1);
3. ``subgraph`` — G_q: scored paths from V_q along R_q (:mod:`sgr.methods.sgr.subgraph`, §3.1.2);
4. ``direct`` — A_c from every source: the model's Cypher with validation and repair (:mod:`cypher.translate`,
   :mod:`cypher.repair`), each of the model's N-best grammar paths compiled, the nearest training questions'
   paths that exist from V_q (plans), G_q's compiled best schema path (:mod:`cypher.compile`, §3.4.1);
5. ``validate`` — γ_j, δ_j of every candidate (§3.4.2); 6. ``collaborate`` — the voting paths P_q with ρ, η (§3.5),
   PRP-RM ρ only when nothing is valid; :func:`sgr.methods.sgr.decision.decide` gives the answers (A_v, the
   ω-weighted vote, or both: ``integrate``); 7. ``generate`` — optional: the model picks among the paths' ends.

The variants (``sgr``, ``sgr-direct``, ``sgr-verify``, ``sgr-no-schema``, ``cypher-only``, ``sgr-compiled``) are
settings of :class:`sgr.methods.sgr.config.SGRConfig`, traced in :class:`sgr.methods.sgr.trace.SGRResult`; off sgr's
``:Entity`` shape: ``ProfiledAnswerer`` (:mod:`sgr.methods.sgr.profiled`). ``llm-only``: :class:`LLMOnlyAnswerer`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from cypher.compile import compile_schema_path
from cypher.conditions import JOIN_KIND
from cypher.repair import CypherGeneration, generate_cypher
from cypher.grammar import longest_query, token_budget
from cypher.translate import example_for, grammar_for, no_schema_messages, relation_endpoints, translate_messages
from sgr.core.errors import EntityNotFound, SgrError
from sgr.core.lexicon import COUNT
from sgr.core.text import normalize, parse_answer_lines
from sgr.core.types import Answer, Prediction, Question, ReasoningPath
from sgr.graph.inverses import NO_INVERSES, InverseRelations, inverse_relations
from sgr.graph.store import GraphStore
from sgr.llm.client import shared_llm
from sgr.llm.verify import path_confidence
from sgr.methods.base import NoOptions, UsageMeter, accepts, llm_cache_option, parse_options
from sgr.methods.confidence import attach_confidence
from sgr.methods.sgr.constraints import (other_entities, query_constraints, settle_constraints, stores_types,
                                         voting_walks)
from sgr.methods.sgr.config import FACTORY_OPTIONS, NEEDS_LLM, SGRConfig, config_from_options, config_for_model
from sgr.methods.sgr.decision import CandidateIn, DecisionInputs, DecisionParams, VoteIn, decide, rho_can_change
from sgr.methods.sgr.reasoning import Candidate, answer_messages, delta_decides, independent_walks
from sgr.methods.sgr.schema import QuestionSchema, bracket_mentions, extract_schema
from sgr.methods.sgr.subgraph import SubgraphBuilder, neighbourhood_relation_types, question_depth
from sgr.methods.sgr.llm_only import LLMOnlyAnswerer
from sgr.methods.sgr.profiled import for_profiled_graph
from sgr.methods.sgr.grounding import ground_values, row_values
from sgr.methods.sgr.trace import SGRResult
from sgr.retrieval.entities import EntityLinker, LinkedEntity
from sgr.retrieval.relations import RelationRetriever, load_retriever, sgr_retriever

def _pattern(c: Candidate) -> tuple[str, ...]:
    """The candidate's relation path: the one compiled for it, else its best walk's."""
    return c.pattern or (tuple(c.paths[0].relations) if c.paths else ())


class SGRAnswerer:
    """SGR (or one of its ablations, by ``config``) as an :class:`sgr.core.types.Answerer`; one method per stage."""

    def __init__(self, store: GraphStore, llm: Any = None, config: SGRConfig | None = None, *, name: str = "sgr",
                 retriever: Any = None, exemplars: Any = None) -> None:
        self.store = store
        self.config = config or SGRConfig()
        self.name = name
        self.llm = llm
        self.meter = UsageMeter(store, llm)
        self.graph_version = store.graph_version()
        self.embedding_retriever = load_retriever(store, "cosine")
        self.retriever: RelationRetriever = retriever if retriever is not None else self.embedding_retriever
        self.vocabulary = self.embedding_retriever.vocabulary
        if exemplars is None and self.config.exemplars and self.llm is not None:
            from sgr.methods.sgr.exemplars import shared_exemplars

            exemplars = shared_exemplars(store.uri, self.graph_version, self.vocabulary)
        self.exemplars = exemplars
        self.linker = EntityLinker(store)
        from sgr.llm.encoders import embed_texts

        self.builder = SubgraphBuilder(store, lambda texts: embed_texts(list(texts)),
                                       self.embedding_retriever.score_of, self.embedding_retriever.vectors)

    @functools.cached_property
    def stores_types(self) -> bool:
        """Whether this graph stores entity ``types`` (asked once per answerer: it is a property of the graph)."""
        return stores_types(self.store)

    @functools.cached_property
    def inverses(self) -> InverseRelations:
        """The graph's inverse relations that compiled paths also walk (none with ``inverse_relations`` off)."""
        return inverse_relations(self.store, self.graph_version) if self.config.inverse_relations else NO_INVERSES

    @property
    def uses_llm_schema(self) -> bool:
        c = self.config
        return c.use_llm_schema and c.schema_guided and self.llm is not None

    # -- Answerer -------------------------------------------------------------------------------------------------
    def answer(self, question: Question) -> Prediction:
        try:
            return self.run(question).prediction
        except EntityNotFound as exc:
            pred = Prediction(question_id=question.id, method=self.name, error=str(exc))
            attach_confidence(pred, self.name, self.model_name)
            return pred

    @property
    def model_name(self) -> str | None:
        """The chat model this variant answers with (what its calibrator was fitted for); None without one."""
        return getattr(self.llm, "name", None) if self.llm is not None else None

    def run(self, question: Question) -> SGRResult:
        """Answer ``question`` and return the full trace (raises EntityNotFound when nothing links)."""
        result = SGRResult(question=question, method=self.name, config=self.config, hops=self.config.hops,
                           prediction=Prediction(question_id=question.id, method=self.name))
        pred = result.prediction
        with self.meter.measure() as usage:
            try:
                self._stages(question, result)
            finally:
                if self.llm is not None:
                    pred.extra["llm_calls_by_stage"] = dict(self.llm.usage().by_stage)
        pred.usage = usage
        pred.extra["llm_cached_calls"] = usage.llm_cached_calls
        pred.extra["signals"] = result.signals()
        attach_confidence(pred, self.name, self.model_name)
        return result

    def _stages(self, question: Question, result: SGRResult) -> None:
        cfg, pred, meter = self.config, result.prediction, self.meter
        with meter.stage("link"):
            result.entities = self.link(question)
        result.hops = question_depth(cfg, question.text, result.entities[0].label)  # as deep as the question asks
        with meter.stage("schema"):
            result.schema = self.schema(question, result.entities, result.hops)
        pred.extra["constraints"] = [c.kind for c in result.schema.constraints]
        if result.schema.model_paths:
            pred.extra["model_paths"] = [{"relations": list(p.relations), "rho": p.rho} for p in result.schema.model_paths]
        if result.schema.plans:
            pred.extra["plans"] = [{"relations": list(p.relations), "cos": round(p.rho, 4)}
                                   for p in result.schema.plans]
        asked = list(result.schema.constraints)  # C_q as the question states it (a later round may relax it)
        for round_no in range(1, max(1, cfg.max_rounds) + 1):
            action = "first" if round_no == 1 else self.widen(result)
            self.reason(question, result, first=round_no == 1)
            d = result.decision
            result.rounds.append({"round": round_no, "action": action, "route": pred.route,
                                  "stage": d.stage if d else None, "candidates": len(result.candidates),
                                  "valid": sum(c.valid for c in result.candidates),
                                  "votes": len(result.inputs.votes) if result.inputs else 0,
                                  "answers": len(pred.answers)})
            if pred.answers or not cfg.use_subgraph:
                break
        pred.extra["rounds"] = result.rounds
        pred.extra["route_source"] = result.decision.route_source if result.decision else None
        if result.inputs is not None:
            pred.extra["decision"] = result.decision_record()
        if cfg.answer_constraints and cfg.schema_guided and result.schema is not None:
            # the compiled routes (the model's paths, plans, G_q's best path) applied C_q in Cypher already
            settle_constraints(self.store, pred, result.schema, asked, limit=cfg.max_answers,
                               in_cypher=pred.route == "direct" and result.cypher_source not in (None, "llm"))
        if cfg.generate_answers and self.llm is not None and pred.answers:
            with meter.stage("generate"):
                self.generate(question, result)

    def reason(self, question: Question, result: SGRResult, *, first: bool) -> None:
        """One round: G_q → each source's candidates → γ, δ → the voting paths → :func:`decide` (again, ρ measured)."""
        cfg, meter = self.config, self.meter
        if cfg.use_subgraph:
            with meter.stage("subgraph"):
                self.subgraph(question, result)
        if first and "scr" in cfg.path_retriever:  # SCR's beam search proposes paths too (they vote)
            with meter.stage("scr"):
                result.scr_paths = self.scr_paths(question, result)
        with meter.stage("direct"):
            cands = self.direct(question, result, llm_cypher=first)
        linked = {e.id for e in result.entities}  # an entity the question names is not its answer
        cands = [c for c in cands if c.key not in linked]
        validated = cfg.validate_answers and result.subgraph is not None
        if validated:
            with meter.stage("validate"):
                self.validate(question, result, cands)
        vote_paths, votes, held = [], [], []  # the voting paths, their votes, the kinds of C_q that held on them
        if cfg.collaborative and result.subgraph is not None:
            with meter.stage("collaborate"):
                keep = [(p, v) for p, v in zip(*self.vote_paths(result, cands)) if v.answer not in linked]
                vote_paths, votes, held = self.constrain_votes(result, [p for p, _ in keep], [v for _, v in keep])
        proposed = [tuple(p.relations) for p in (result.schema.model_paths if result.schema else [])]
        answers = sorted({c.key for c in cands} | {v.answer for v in votes})  # equal v: the graph's links, then ω
        inputs = DecisionInputs(sources=list(dict.fromkeys(c.source for c in cands)),
                                candidates=[CandidateIn(c.key, c.text, c.source, _pattern(c), c.gamma, c.delta,
                                                        c.delta_source) for c in cands],
                                votes=votes, model_patterns=proposed, validated=validated,
                                same_relation=self.inverses.names_of(r for c in cands for r in _pattern(c)),
                                joined=JOIN_KIND in held, links=self.store.topic_links(sorted(linked), answers))
        params = self.decision_params()
        decision = decide(inputs, params)
        if votes and not any(decision.valid) and (not cfg.lazy_verification  # nothing valid: the paths decide
                                                  or rho_can_change(inputs, params, decision)):
            with meter.stage("collaborate"):
                if self.collaborate(question, result, vote_paths, votes):  # ρ measured: decide again
                    decision = decide(inputs, params)
        result.record(cands, vote_paths, inputs, decision)

    def decision_params(self) -> DecisionParams:
        """The config's μ, ε, λ …; without a model (``sgr-compiled``) δ does not exist, so v_j = γ_j (μ = 0)."""
        params = DecisionParams.from_config(self.config)
        return params if self.llm is not None else dataclasses.replace(params, mu=0.0)

    def widen(self, result: SGRResult) -> str:
        """Before another round when nothing was answered: relax the constraints and extend the expansion one hop."""
        dropped = [c.kind for c in result.schema.constraints] if result.schema is not None else []
        if result.schema is not None:
            result.schema.constraints = []
        result.hops += 1
        return f"relax constraints {dropped or '(none)'}; extend to {result.hops} hops"

    # -- 1. link: V_q ----------------------------------------------------------------------------------------------
    def link(self, question: Question) -> list[LinkedEntity]:
        """Given topics, bracketed mentions or question spans (ties broken by relation similarity); when nothing
        links and the model may be asked, the model names the mentions. Raises EntityNotFound."""
        cfg = self.config
        topics = (list(question.topic_entities) or list(question.topic_mids)) if cfg.given_topics else []
        global_scores = {r.name: r.score for r in self.retriever.retrieve(question.text, 50)}
        mentions = bracket_mentions(question.text)
        entities = self.linker.link_question(question.text, mentions, topics=topics, relation_scores=global_scores)
        if not entities and self.uses_llm_schema:
            probe = extract_schema(question.text, retriever=self.retriever, llm=self.llm, k=cfg.top_k_relations,
                                   beta=cfg.beta, max_relations=2, need_mentions=True, stage="schema-entities")
            mentions = probe.mentions
            entities = [e for e in (self.linker.link_mention(m, global_scores) for m in mentions) if e is not None]
        if not entities:
            raise EntityNotFound(f"no graph node matches the question's entities "
                                 f"({', '.join(topics or mentions) or 'none recognised in the text'}): "
                                 "name one with --topic")
        return entities

    # -- 2. schema: S_q --------------------------------------------------------------------------------------------
    def schema(self, question: Question, entities: list[LinkedEntity], hops: int | None = None) -> QuestionSchema:
        """Candidate relations among the predicates around V_q, constraints, and the model's R_q: its N-best relation
        paths under the graph grammar (``path_grammar``, ``hops`` deep), else its JSON pick among the candidates."""
        cfg = self.config.at_depth(hops or self.config.hops)
        among = neighbourhood_relation_types(self.store, [e.id for e in entities], depth=min(2, cfg.hops))
        grammar_route = (self.uses_llm_schema and cfg.path_grammar and getattr(self.llm, "constrained", False)
                         and getattr(self.llm, "dialect", "") == "llamacpp")
        schema = extract_schema(question.text, retriever=self.retriever, among=among, k=cfg.top_k_relations,
                                llm=self.llm if self.uses_llm_schema and not grammar_route else None,
                                entity=entities[0].label, exemplars=self.exemplars if cfg.exemplars else None,
                                beta=cfg.beta, max_relations=max(2, min(4, 2 * cfg.hops)), n_examples=cfg.n_examples)
        schema.mentions = [e.mention for e in entities]
        if grammar_route:
            self.model_paths(question, entities, schema, cfg.hops)
        if not cfg.schema_guided:
            schema.relations, schema.ordered, schema.constraints = [], [], []
        return schema

    def model_paths(self, question: Question, entities: list[LinkedEntity], schema: QuestionSchema,
                    hops: int | None = None) -> None:
        """R_q from the model: one call under the trie grammar; the N-best paths with ρ, and grounded constraints."""
        from sgr.methods.sgr.exemplars import mask_entity
        from sgr.methods.sgr.prompts import schema_prompt
        from sgr.methods.sgr.schema import Constraint, combine_scores
        from sgr.methods.sgr.trie import ModelPath, path_grammar, prefilter, relation_paths, score_reply

        cfg = self.config.at_depth(hops or self.config.hops)
        full = relation_paths(self.store, [e.id for e in entities], max_hops=cfg.hops,
                              max_relations=max(1, 2 * cfg.hops), graph_version=self.graph_version)
        masked = mask_entity(question.text, entities[0].label)
        trie = prefilter(full, lambda names: self.retriever.score_of(masked, names), cfg.max_grammar_paths)
        if not len(trie):
            return
        near = self.nearest_exemplars(question, entities[0].label)
        schema.plans = [ModelPath(tuple(ex.relations), sim, float("nan"), list(full.paths[tuple(ex.relations)]))
                        for ex, sim in near[:cfg.plans] if tuple(ex.relations) in full]
        examples = [ex.worked() for ex, _ in near[:cfg.n_examples]]
        rec = self.llm.complete_scored(schema_prompt(question.text, [e.label for e in entities], examples),
                                       stage="schema",
                                       grammar=path_grammar(trie, cfg.n_best), max_tokens=cfg.schema_max_tokens)
        paths, constraints = score_reply(rec.text, rec.token_logprobs, trie)
        schema.reply = rec.text
        schema.model_paths = paths
        if paths:
            schema.source = "grammar"
            if cfg.model_path_order:
                schema.ordered = list(paths[0].relations)
                schema.relations = combine_scores(schema.relations, schema.ordered, cfg.beta)
        qlow = schema.cue_text.lower()
        have = {c.kind for c in schema.constraints}
        for kind, value in constraints:  # the model's constraints, kept when the question carries their words
            grounded = value.lower() in qlow or (kind == "count" and COUNT.search(qlow) is not None)  # outside entity names
            if grounded and kind not in have:
                schema.constraints.append(Constraint(kind, value, None if kind == "count" else value.lower()))
                have.add(kind)

    def nearest_exemplars(self, question: Question, entity: str | None) -> list[Any]:
        """The nearest training questions with their cosine: ``n_examples`` worked examples of the schema prompt and
        ``plans`` retrieved plans are the first of them (``exemplars``)."""
        cfg = self.config
        k = max(cfg.n_examples, cfg.plans)
        if not (cfg.exemplars and self.exemplars is not None and k > 0):
            return []
        return self.exemplars.nearest(question.text, k, entity)

    # -- 3. subgraph: G_q ------------------------------------------------------------------------------------------
    def subgraph(self, question: Question, result: SGRResult) -> None:
        from sgr.methods.sgr.exemplars import mask_entity

        assert result.schema is not None
        result.prediction.extra["linked"] = [{"mention": e.mention, "id": e.id, "name": e.name, "method": e.method}
                                             for e in result.entities]
        masked = mask_entity(question.text, result.entities[0].label)
        cfg = self.config.at_depth(result.hops)
        result.subgraph = self.builder.build(result.schema, result.entities, cfg, masked_question=masked,
                                             beta=self.config.beta, inverses=self.inverses)
        result.prediction.paths = list(result.subgraph.paths[:10])
        result.prediction.extra["subgraph_cost"] = result.subgraph.cost

    def scr_paths(self, question: Question, result: SGRResult) -> list[ReasoningPath]:
        """SCR's top-K paths from the linked entities (beam search over the same store)."""
        from sgr.methods.scr.method import scr_paths

        topics = [e.id for e in result.entities]
        return scr_paths(self.store, question, topics, k=self.config.scr_beam,
                         checkpoint=self.config.scr_checkpoint or None) if topics else []

    # -- 4. direct: A_c --------------------------------------------------------------------------------------------
    def direct(self, question: Question, result: SGRResult, *, llm_cypher: bool = True) -> list[Candidate]:
        """A_c of every source, in their order of trust: the model's Cypher (first round only; ``"llm"``), each of
        the model's N-best grammar paths compiled (``"model1"``, …), each plan (``"plan1"``, …), G_q's compiled best
        schema path (``"compiled"``). Compiled queries are cheap, so every source is computed; :func:`decide` picks."""
        cfg = self.config
        pred = result.prediction
        g = result.subgraph
        cands: list[Candidate] = []
        if llm_cypher and cfg.use_llm_cypher and self.llm is not None:
            gen = self.llm_cypher(question, result.schema, result.entities)
            result.generation = gen
            final = gen.final
            if final is not None:
                pred.cypher.append(final.query)
                values = row_values(final.rows or [])
                if values:
                    for c in ground_values(self.store, values, result.subgraph, [e.id for e in result.entities],
                                           max_len=max(2, 2 * self.config.hops)):
                        c.origin, c.source = "llm", "llm"
                        cands.append(c)
        if result.schema is not None and g is not None:
            for kind, paths in (("model", result.schema.model_paths), ("plan", result.schema.plans)):
                for i, path in enumerate(paths):
                    for c in self.path_candidates(result, path, kind):
                        c.source = f"{kind}{i + 1}"
                        cands.append(c)
        if cfg.compiled_fallback and g is not None and g.schema_paths:
            best = g.schema_paths[0]
            for c in self.run_compiled(result, best.seed, best.steps, best.relations, best.score, "compiled"):
                c.source = "compiled"
                cands.append(c)
        return cands

    def run_compiled(self, result: SGRResult, seed: str, steps: Sequence[tuple[str, str]], relations: list[str],
                     score: float, origin: str) -> list[Candidate]:
        """Candidates of one compiled relation path from ``seed``, each with its own walks."""
        cfg = self.config
        qc = None
        if cfg.answer_constraints and cfg.schema_guided and result.schema is not None:  # C_q in Cypher; count is
            others = other_entities([e.id for e in result.entities], seed)  # taken over validated answers
            qc = query_constraints(result.schema.constraints, result.schema.cue_text, count=False, join_ids=others,
                                   mention=True)
        compiled = compile_schema_path(seed, steps, limit=cfg.max_answers, paths_per_answer=cfg.paths_per_answer,
                                       constraints=qc, inverses=self.inverses)
        rows = compiled.run(self.store).rows
        result.prediction.cypher.append(compiled.inline())
        if not rows and qc is not None and not qc.empty:  # a constraint never empties the answer
            result.prediction.extra.setdefault("constraints_applied", []).append(
                f"{', '.join(qc.kinds)}: the constrained query returned nothing; unconstrained query used")
            compiled = compile_schema_path(seed, steps, limit=cfg.max_answers, paths_per_answer=cfg.paths_per_answer,
                                           inverses=self.inverses)
            rows = compiled.run(self.store).rows
            result.prediction.cypher.append(compiled.inline())
        if result.compiled is None or origin == "compiled":
            result.compiled = compiled
        out = []
        for r in rows:  # each walk as stored: a step may have matched the relation's inverse name
            paths = [ReasoningPath(nodes=ids, relations=[t for t, _ in stored], score=score, names=names,
                                   directions=["out" if forward else "in" for _, forward in stored], source=origin)
                     for ids, names, stored in zip(r["path_ids"], r["path_names"], r["path_steps"])]
            out.append(Candidate(r["id"], r["name"] or r["id"], paths, origin=origin, pattern=tuple(relations)))
        return out

    def path_candidates(self, result: SGRResult, path: Any, origin: str) -> list[Candidate]:
        """A_c from one of the model's paths or one plan: each (seed, directions) realising it, compiled and run
        (variants that are one walk under a relation's two names, :attr:`inverses`, run once)."""
        out: dict[str, Candidate] = {}
        seen: set[tuple[str, tuple[Any, ...]]] = set()
        for seed, steps in path.variants[:3]:
            walk = self.inverses.walk(seed, steps)
            if walk in seen:
                continue
            seen.add(walk)
            for c in self.run_compiled(result, seed, steps, list(path.relations), path.rho, origin):
                if c.key in out:
                    out[c.key].paths += c.paths
                else:
                    out[c.key] = c
        return list(out.values())

    def llm_cypher(self, question: Question, schema: QuestionSchema | None,
                   entities: list[LinkedEntity]) -> CypherGeneration:
        cfg = self.config
        names = [e.name for e in entities if e.name]
        entity = names[0] if names else None
        budget = cfg.cypher_max_tokens
        if cfg.schema_guided and schema is not None and schema.relations:
            proposed = [r for p in schema.model_paths[:1] for r in p.relations]
            rels = list(dict.fromkeys(schema.ordered + proposed + schema.relation_names))[:6]
            endpoints = relation_endpoints(self.store, rels, self.graph_version)
            near = self.exemplars.nearest(question.text, 1, entity) if self.exemplars is not None and cfg.exemplars else []
            msgs = translate_messages(question.text, entity, endpoints, example_for(rels, near[0][0] if near else None))
            grammar = None
            if getattr(self.llm, "constrained", False):  # C_q as the grammar's finite conditions / ordinal form
                qc = (query_constraints(schema.constraints, schema.cue_text, count=False,
                                        second_name=names[1] if len(names) > 1 else None)
                      if cfg.answer_constraints else None)
                cvt, typed = [e.relation for e in endpoints if "CVT" in (e.head, e.tail)], self.stores_types
                grammar = grammar_for(rels, names, cfg.hops, qc, cvt_relations=cvt, has_types=typed)
                budget = max(budget, token_budget(longest_query(rels, names, cfg.hops, qc, cvt_relations=cvt,
                                                                has_types=typed)))  # never cut before RETURN
            allowed = rels
        else:
            msgs, grammar, allowed = no_schema_messages(question.text, entity), None, None
        return generate_cypher(self.llm, msgs, store=self.store, vocabulary=self.vocabulary, grammar=grammar,
                               max_repairs=cfg.max_repairs, allowed=allowed, max_tokens=budget)

    # -- 5. validate: γ, δ ---------------------------------------------------------------------------------------
    def validate(self, question: Question, result: SGRResult, cands: list[Candidate]) -> None:
        """γ_j and δ_j of every candidate (eqs. 10–11): γ on the candidate's own walk for the model's paths and plans,
        the best walk of G_q reaching it otherwise; δ = the question cosine for a plan's candidates, the model's
        probability of the candidate's path when it is one of the model's N-best, else PRP-RM of the verification
        prompt where it can decide ``v ≥ ε`` (``lazy_verification``; at most ``max_verify_calls`` patterns), else the
        prior."""
        cfg = self.config
        g = result.subgraph
        assert g is not None
        stext = result.schema.relations_text() if result.schema else None
        verified: dict[tuple[str, ...], tuple[float, str]] = {}
        calls = 0
        rho = result.schema.model_rho() if result.schema else {}
        for c in cands:
            own_walk = c.origin in ("model", "plan") and c.paths
            c.gamma = g.path_consistency(c.key, _pattern(c), self.inverses) if own_walk else g.answer_consistency(c.key)
            c.delta, c.delta_source = cfg.prior_confidence, "prior"
            if c.origin == "plan" and c.paths:  # δ = how alike the plan's training question is
                c.delta, c.delta_source = c.paths[0].score, "plan"
            elif c.paths and _pattern(c) in rho:  # δ = the model's probability of the answer's path
                c.delta, c.delta_source = rho[_pattern(c)], "model-path"
        for c in sorted(cands, key=lambda c: -c.gamma):
            if not c.paths or c.delta_source in ("model-path", "plan"):
                continue
            if cfg.lazy_verification and not delta_decides(c.gamma, cfg.mu, cfg.epsilon):
                continue
            pattern = _pattern(c)
            if pattern not in verified:
                if calls >= cfg.max_verify_calls or self.llm is None:
                    continue
                v = path_confidence(self.llm, question.text, c.paths[0].render(), stext,
                                    prior=cfg.prior_confidence, stage="verify")
                verified[pattern] = (v.score, "prp-rm" if v.measured else "prior")
                calls += 1
            c.delta, c.delta_source = verified[pattern]

    # -- 6. collaborate: P_q ---------------------------------------------------------------------------------------
    def vote_paths(self, result: SGRResult, cands: list[Candidate]) -> tuple[list[ReasoningPath], list[VoteIn]]:
        """P_q: G_q's top M walks (:func:`independent_walks` of them), the model's N-best paths' walks, SCR's paths;
        ρ = the model's path probability for its own patterns (prior until :meth:`collaborate` measures others),
        η = C(p, G_q)."""
        cfg = self.config
        g = result.subgraph
        assert g is not None
        top = sorted(g.paths, key=lambda p: -p.score)[:cfg.M] if cfg.path_retriever != "scr" else []
        paths = independent_walks(top)
        seen = {(tuple(p.nodes), tuple(p.relations)) for p in paths}
        for c in cands:
            if c.origin == "model":
                for p in c.paths:
                    if (tuple(p.nodes), tuple(p.relations)) not in seen:
                        seen.add((tuple(p.nodes), tuple(p.relations)))
                        paths.append(p)
        rho = {self.inverses.canonical(k): v for k, v in (result.schema.model_rho() if result.schema else {}).items()}
        votes = []
        for p in paths:  # a walk of the model's path may store a step under the inverse name: compare modulo pairs
            pat, key = tuple(p.relations), self.inverses.canonical(p.relations)
            own = key in rho
            votes.append(VoteIn(p.answer, p.answer_name, pat, rho[key] if own else cfg.prior_confidence,
                                g.consistency(p), "model" if own or p.source == "model" else "graph",
                                "model-path" if own else "prior"))
        # SCR's paths: ρ = their probability P(a, p | q); η = graph consistency with G_q (the walk itself when G_q
        # has it, else the best walk of G_q reaching the same answer; 0 when G_q does not reach it).
        for p in result.scr_paths:
            votes.append(VoteIn(p.answer, p.answer_name, tuple(p.relations), p.score,
                                max(g.consistency(p), g.answer_consistency(p.answer)), "scr", "scr"))
        return paths + list(result.scr_paths), votes

    def constrain_votes(self, result: SGRResult, paths: list[ReasoningPath], votes: list[VoteIn]
                        ) -> tuple[list[ReasoningPath], list[VoteIn], list[str]]:
        """C_q filters P_q (SGR §3.1.1): when some voting paths meet another linked entity (their answer or a CVT of
        the walk touches it) or pass through a CVT that touches a node the question names, only those vote
        (:func:`voting_walks`; every path votes when none does), and the kinds of condition that held. The other
        conditions act on the chosen answers (:meth:`_stages`): measured on WebQSP, the type's name test over P_q
        kept type nodes of unrelated paths ("what country …" → the node "Country")."""
        cfg = self.config
        if not (cfg.answer_constraints and cfg.schema_guided and result.schema is not None and paths):
            return paths, votes, []
        mention = query_constraints([], result.schema.cue_text, mention=True).mention_text
        kept, kinds = voting_walks(self.store, [p.nodes for p in paths if p.nodes], [e.id for e in result.entities],
                                   mention)
        pairs = [(p, v) for p, v in zip(paths, votes) if tuple(p.nodes) in kept]
        if not pairs:
            return paths, votes, []
        if len(pairs) < len(paths):
            result.prediction.extra.setdefault("constraints_applied", []).append(
                f"{', '.join(kinds)} on the voting paths: kept {len(pairs)} of {len(paths)}")
        return [p for p, _ in pairs], [v for _, v in pairs], kinds

    def collaborate(self, question: Question, result: SGRResult, paths: list[ReasoningPath],
                    votes: list[VoteIn]) -> bool:
        """ρ_i by PRP-RM for the G_q patterns the model did not propose (at most ``max_verify_calls``, only when the
        vote has more than one pattern); True when some ρ changed."""
        cfg = self.config
        if self.llm is None or cfg.max_verify_calls <= 0:
            return False
        todo = [i for i, v in enumerate(votes) if v.origin == "graph"]
        patterns = list(dict.fromkeys(votes[i].relations for i in todo))
        if len({v.relations for v in votes if v.origin != "scr"}) <= 1:
            return False
        stext = result.schema.relations_text() if result.schema else None
        calls = 0
        changed = False
        for pat in patterns:
            if calls >= cfg.max_verify_calls:
                break
            rep = next(paths[i] for i in todo if votes[i].relations == pat)
            v = path_confidence(self.llm, question.text, rep.render(), stext, prior=cfg.prior_confidence,
                                stage="verify")
            calls += v.measured
            if v.measured:
                for i in todo:
                    if votes[i].relations == pat:
                        votes[i].rho, votes[i].rho_source = v.score, "prp-rm"
                changed = True
        return changed

    # -- 7. generate -----------------------------------------------------------------------------------------------
    def generate(self, question: Question, result: SGRResult) -> None:
        """The model writes the answers from the top paths; its grounded lines go first."""
        pred = result.prediction
        paths = [p for a in pred.answers for p in a.paths[:1]] + [p for p in pred.paths if p not in pred.answers]
        text = self.llm.complete(answer_messages(question.text, paths), stage="answer", max_tokens=80)
        result.generated_text = text
        index = {normalize(a.text): a for a in pred.answers}
        chosen: list[Answer] = []
        for line in parse_answer_lines(text):
            a = index.get(normalize(line))
            if a is not None and a not in chosen:
                chosen.append(a)
        if chosen:  # grounded lines only; keep the rest after them
            pred.answers = chosen + [a for a in pred.answers if a not in chosen]


# ------------------------------------------------------------------------------------------------------------------
# factories (registered in sgr/methods/registry.py)
# ------------------------------------------------------------------------------------------------------------------
def create(variant: str, ctx: Any) -> Any:
    """Build a variant for ``ctx`` (:class:`sgr.methods.base.MethodContext`); the LLM comes from ctx or the settings."""
    options = dict(getattr(ctx, "options", {}) or {})
    if variant == "llm-only":  # no settings of its own: refuse any option but the common ones
        parse_options(NoOptions, options, method=variant)
    cfg = config_from_options(variant, options) if variant != "llm-only" else None  # a typo fails before any work
    if cfg is not None and ctx.store is not None and (p := for_profiled_graph(ctx, variant, cfg, options)):
        return p
    llm = getattr(ctx, "llm", None)
    if llm is None and variant in NEEDS_LLM:
        llm = shared_llm(cache=llm_cache_option(options, "sgr"))
    if cfg is None:
        return LLMOnlyAnswerer(llm)
    cfg = config_for_model(cfg, options, getattr(llm, "name", None))
    retriever = sgr_retriever(ctx.store, options.get("relation_retriever"))
    return SGRAnswerer(ctx.store, llm if variant in NEEDS_LLM else None, cfg, name=variant, retriever=retriever)


#: the registry's factories, one per variant: ``factory(ctx)``, each declaring the options it accepts
make_sgr, make_sgr_direct, make_sgr_verify, make_sgr_no_schema, make_cypher_only, make_sgr_compiled = (
    accepts(SGRConfig, FACTORY_OPTIONS)(functools.partial(create, variant))
    for variant in ("sgr", "sgr-direct", "sgr-verify", "sgr-no-schema", "cypher-only", "sgr-compiled"))
make_llm_only = accepts(NoOptions)(functools.partial(create, "llm-only"))

__all__ = ["SGRAnswerer", "SGRResult", "LLMOnlyAnswerer", "SGRConfig", "config_from_options", "create", "SgrError"]
