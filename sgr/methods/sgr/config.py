"""SGR's one typed config, its method variants, and how ``-o KEY=VALUE`` options become a config.

:class:`ExpansionConfig` holds the knobs of G_q (:mod:`sgr.methods.sgr.subgraph`); :class:`SGRConfig` extends it
with the rest of the method, so no field is written twice. :func:`config_from_options` parses a variant's
options once with :func:`sgr.methods.base.parse_options`: an unknown key (``-o muu=0.9``) or a bad value is a
:class:`~sgr.core.errors.ConfigError` that lists the valid keys.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Self

from sgr.core.errors import ConfigError
from sgr.methods.base import parse_options

#: Who proposes the collaborative stage's paths (SGRConfig.path_retriever).
PATH_RETRIEVERS = ("schema", "scr", "schema+scr")
#: Options a factory reads besides the config's fields (the relation retriever to build).
FACTORY_OPTIONS = frozenset({"relation_retriever"})


@dataclass
class ExpansionConfig:
    """Knobs of the expansion and the path score s(P) (:mod:`sgr.methods.sgr.subgraph`).

    * ``hops = 2`` — expansion depth; CVT nodes do not count (§3.1.2). ``deeper_at = 0.5`` — G_q goes as deep as the
      question asks: when the hop model (:mod:`sgr.retrieval.hops`) gives three or more hops at least this
      probability, it expands to three hops (above 1: never). Chosen on dev (``bench/experiments/path-ranker.md``).
    * ``beam = 12`` — schema paths expanded per round; ``top_n = 100`` — walks kept in G_q;
      ``paths_per_answer = 3`` walks per end node; ``max_answers = 200`` end nodes per schema path;
      ``seed_cap = 3000`` / ``node_cap = 200`` neighbours fetched per seed / other frontier node;
      ``fetch_budget = 20000`` rows fetched per question at most (no further depth once reached): at depth h (2, or
      3 when ``deeper_at`` holds) a path has up to 2·h relations (CVT steps are free), and one question's expansion
      costs at most 2·h neighbour queries per seed and ``fetch_budget`` + one depth's rows, hubs included.
    * ``schema_guided = True`` — s(P) uses S_q (off: the ``sgr-no-schema`` ablation).
    * path score weights: ``w_rel = 1``, ``w_align = 0.3``, ``w_con = 0.2``, ``w_len = 0.3`` (per hop beyond the
      first, lifted for the model's own path), ``order_weight = 0.4`` — set on WebQSP questions disjoint from the
      benchmark sample.
    * ``consistency_temperature = 0.1`` — τ of C(p, G_q) = exp(−(s* − s(p))/τ).
    * ``path_ranker = True`` — s(P) is the learned ranker (:mod:`sgr.methods.sgr.path_ranker`, weights fitted on dev
      questions, shipped as ``sgr/assets/path_ranker.json``) over the same terms and P(hops | q); off (or without the
      file): the hand-set sum above.
    """

    hops: int = 2
    deeper_at: float = 0.5
    beam: int = 12
    top_n: int = 100
    paths_per_answer: int = 3
    max_answers: int = 200
    seed_cap: int = 3000
    node_cap: int = 200
    fetch_budget: int = 20000
    schema_guided: bool = True
    w_rel: float = 1.0
    w_align: float = 0.3
    w_con: float = 0.2
    w_len: float = 0.3
    order_weight: float = 0.4
    consistency_temperature: float = 0.1
    path_ranker: bool = True

    def at_depth(self, hops: int) -> Self:
        """This config expanding ``hops`` deep (itself when it already does)."""
        return self if hops == self.hops else dataclasses.replace(self, hops=hops)


@dataclass
class SGRConfig(ExpansionConfig):
    """Every knob of SGR (the expansion's fields above, and):

    * ``top_k_relations = 10`` — embedding top-k candidate relations of S_q (§3.1.1).
    * ``path_grammar = True`` — R_q from the model under the graph grammar (:mod:`sgr.methods.sgr.trie`): ``n_best = 2``
      path lines, at most ``max_grammar_paths = 150`` paths in one grammar (the relation retriever's ranking
      pre-filters beyond), ``schema_max_tokens = 120``; off (or an endpoint without grammars): the model picks numbered
      candidate relations in JSON. ``model_path_order = False`` — whether the model's top path also steers G_q's
      path score (the order term); off, G_q is the graph's own judgement and the model's paths are validated
      against it (v = μ·ρ + (1−μ)·γ on the path's own walk) before the compiled best path is tried.
    * ``M = 100`` — paths of G_q voting in collaborative reasoning (eq. 14).
    * ``mu = 0.5`` (μ, eq. 12), ``epsilon = 0.5`` (ε, eq. 13), ``lam = 0.3`` (λ, eq. 17) — chosen by
      ``bench/sgr_grid.py`` on validation questions only. First (``bench/results/sgr_grid.json``, MetaQA dev 20 per
      hop and WebQSP train, the hand-set G_q score): μ 0.9, ε 0.6, λ 0.1, the model's path probability weighing
      most. Again with the learned G_q ranker and CWQ dev (``--cwq 100``, ``bench/results/sgr_grid_cwq.json``, ties
      broken as the script does): μ 0.5, ε 0.5, λ 0.3, ``gamma_min`` 0.3 —
      the model's path and G_q's compiled path weigh alike (a compiled path the graph holds, γ ≈ 1, is valid with
      the prior δ), which the packaged model's compositional paths need (CWQ dev 0.35 → 0.44, MetaQA dev the same).
      The graph's consistency weighs most in the vote. Before both searches: 0.3 / 0.7 / 0.3.
    * ``beta = 0.5`` — weight of the model's relation choice against embedding similarity in s(r).
    * ``answer_ratio = 0.5`` — voted answers kept relative to â's support.
    * ``integrate = False`` — how A_v and the vote combine (:mod:`sgr.methods.sgr.decision`): off, the first source
      with a valid candidate answers and the paths vote only when nothing is valid; on, A_v's candidates vote with
      weight v_j alongside the paths.
    * ``prior_confidence = 0.5`` — δ/ρ when the endpoint gives no log-probabilities.
    * ``max_repairs = 2`` — NL→Cypher repair rounds; ``max_verify_calls = 0`` — PRP-RM Yes/No calls per stage
      (validation, collaboration) for candidates and paths the model did not propose (0: their δ/ρ is the prior;
      the grid's figures were measured so, and the base model's Yes/No judgement is weak — see docs/methods/prp-rm.md);
      ``lazy_verification`` — ask δ only when it can change ``v ≥ ε`` (on a profiled graph, the NL→Cypher call only
      when no compiled plan found rows: :mod:`sgr.methods.sgr.profiled`, which repairs at most once);
      ``cypher_max_tokens = 90`` — completion budget of one NL→Cypher reply; under the Cypher grammar the budget
      is raised to cover the longest query the grammar admits (:func:`cypher.grammar.longest_query`).
    * ``max_rounds = 2`` — reasoning rounds when nothing is answered: round 2 relaxes every constraint and extends
      the expansion one hop (G_q, compiled path, validation, votes again; no second NL→Cypher call).
    * ``answer_constraints = True`` — C_q acts: in the compiled Cypher (type, time, comparison, ordinal, second
      entity), in the model's Cypher grammar, and on the final answers' own walks (``count`` included).
    * ``inverse_relations = True`` — a compiled relation path also walks each step's inverse relation (one fact
      stored under either of two names, :mod:`sgr.graph.inverses`), so its answer set is the whole set.
    * ``exemplars = True``, ``n_examples = 1`` — worked examples of the schema prompt from training questions.
    * ``plans = 1`` — the relation paths of the nearest training questions that exist from V_q join A_c as retrieved
      plans (sources ``plan1``, …; δ = the questions' cosine; on the grammar route, with the exemplar pool);
      ``plan_trust = 0.95`` — the cosine at which a plan is trusted before the model's paths (below it the plan
      is recorded and takes no part; 1.01: never), chosen on validation questions (``bench/sgr_grid.py``: every
      value of 0.8–0.95 gained the same there, the one closest to "never" is kept).
    * ``gamma_min = 0.3`` — the least graph consistency γ a candidate needs when its δ is the model's own confidence
      (:mod:`sgr.methods.sgr.decision`): G_q's veto on a confident model path it does not hold; a tuned model's
      provenance sets it with the other decision parameters (``bench/sgr_grid.py --held-out``).
    * ``graph_first = True`` — G_q's compiled best schema path answers before the model's own paths and Cypher
      (after a trusted plan): a tuned path generator writes the path of a WebQSP-like question well but stops a hop
      short of compositions, where G_q's ranker (fitted on CWQ dev) goes on. Chosen on CWQ dev questions no model
      trained on (two samples of 100: +4 each with the shipped weights) and MetaQA dev (no change); the packaged
      model's answers hardly change (``bench/experiments/models.md``). Where one of the model's paths continues
      G_q's (its relations, then more), that path goes first: G_q's answers are the bridge it goes on from
      (:func:`sgr.methods.sgr.decision.continuing_sources`; ``bench/experiments/cwq-misses.md``).
    * ``join_first = True`` — when C_q's join holds on the voting paths (some walks meet another linked entity, and
      only those vote) and the trusted source's top answer is none of theirs, the joined paths decide
      (:mod:`sgr.methods.sgr.decision`): a conjunction's answer meets every entity the question names. Chosen on
      dev runs replayed (``bench/experiments/sgr-cwq.md``).
    * ``generate_answers = False`` — the model picks the final answers among the top paths' ends.
    * ``path_retriever = "schema"`` — who proposes the collaborative stage's M paths: ``"schema"`` (G_q's
      scored paths), ``"scr"`` (SCR's beam search, ρ = P(a, p | q)) or ``"schema+scr"``; ``scr_beam = 10`` (K),
      ``scr_checkpoint = ""`` (default: the latest ``sgr scr train`` run or ``SGR_SCR_CHECKPOINT``).
    * ``given_topics = True`` — link the question's given topic entities (a dataset's, ``--topic``) when it has
      them; off, link from the text alone, as ``sgr ask`` without ``--topic`` does (``bench/confidence.py``
      calibrates so: a calibrator fitted on given topics reads every linked-from-text answer as suspect).
    * stage switches set by the variants: ``use_llm_schema``, ``use_llm_cypher``, ``use_subgraph``,
      ``validate_answers``, ``collaborative``, ``compiled_fallback``.
    """

    top_k_relations: int = 10
    path_grammar: bool = True
    n_best: int = 2
    max_grammar_paths: int = 150
    schema_max_tokens: int = 120
    model_path_order: bool = False
    M: int = 100
    lam: float = 0.3
    mu: float = 0.5
    epsilon: float = 0.5
    beta: float = 0.5
    answer_ratio: float = 0.5
    integrate: bool = False
    prior_confidence: float = 0.5
    max_repairs: int = 2
    given_topics: bool = True
    cypher_max_tokens: int = 90
    max_verify_calls: int = 0
    lazy_verification: bool = True
    use_llm_schema: bool = True
    use_llm_cypher: bool = True
    use_subgraph: bool = True
    validate_answers: bool = True
    collaborative: bool = True
    compiled_fallback: bool = True
    max_rounds: int = 2
    generate_answers: bool = False
    answer_constraints: bool = True
    inverse_relations: bool = True
    exemplars: bool = True
    n_examples: int = 1
    plans: int = 1
    plan_trust: float = 0.95
    gamma_min: float = 0.3
    graph_first: bool = True
    join_first: bool = True
    path_retriever: str = "schema"
    scr_beam: int = 10
    scr_checkpoint: str = ""


VARIANTS: dict[str, dict[str, Any]] = {
    "sgr": {},
    "sgr-direct": {"collaborative": False},
    "sgr-verify": {"max_verify_calls": 2},
    "sgr-no-schema": {"schema_guided": False, "use_llm_schema": False},
    "cypher-only": {"use_subgraph": False, "validate_answers": False, "collaborative": False,
                    "compiled_fallback": False},
    "sgr-compiled": {"use_llm_schema": False, "use_llm_cypher": False},
}
#: the variants that call the LLM (for the schema or for Cypher), and llm-only
NEEDS_LLM = {v for v, o in VARIANTS.items() if o.get("use_llm_schema", True) or o.get("use_llm_cypher", True)} | {
    "llm-only"}


def config_from_options(variant: str, options: dict[str, Any] | None = None) -> SGRConfig:
    """The variant's :class:`SGRConfig` with ``options`` (field names; ``-`` read as ``_``) applied on top.

    Raises :class:`ConfigError` for an unknown key, a bad value or an unknown ``path_retriever``.
    """
    if variant not in VARIANTS:
        raise ConfigError(f"unknown SGR variant {variant!r}; known: {', '.join(VARIANTS)}")
    opts = {k.replace("-", "_"): v for k, v in (options or {}).items() if v is not None}
    cfg = parse_options(SGRConfig, opts, method=variant, base=SGRConfig(**VARIANTS[variant]),
                        extra_keys=FACTORY_OPTIONS)
    if cfg.path_retriever not in PATH_RETRIEVERS:
        raise ConfigError(f"{variant}: option path_retriever must be one of {', '.join(PATH_RETRIEVERS)}, "
                          f"not {cfg.path_retriever!r}")
    return cfg


#: decision parameters a tuned model's provenance may set (``bench/sgr_grid.py --held-out … --set-provenance``)
TUNED_DECISION_KEYS = ("mu", "epsilon", "lam", "answer_ratio", "integrate", "plan_trust", "gamma_min")


def tuned_overrides(cfg: SGRConfig, options: dict[str, Any], model_name: str | None) -> dict[str, Any]:
    """What SGR changes in ``cfg`` for tuned weights (``sgr llm tune``); nothing for the packaged model.

    They get the schema prompt they were trained on — as many worked examples as their provenance's
    ``prompt_examples`` (0, the zero-shot prompt, when it names none) —, the decision parameters chosen for them on
    their held-out questions (provenance ``decision``), and no NL→Cypher call: they are tuned on the schema stage
    only, so the compiler writes the direct Cypher from their top path and C_q (``use_llm_cypher = False``;
    measured: their own Cypher changed 1 of 485 WebQSP and 2 of 300 MetaQA 1-hop answers, at half the latency).
    Each unless ``options`` set it (``exemplars`` also keeps ``n_examples``)."""
    from sgr.llm.server import is_tuned, tuned_provenance

    if not (model_name and is_tuned(model_name)):
        return {}
    prov = tuned_provenance(model_name)
    changes: dict[str, Any] = {}
    if not {"n_examples", "exemplars"} & set(options):
        changes["n_examples"] = int(prov.get("prompt_examples") or 0)
    if "use_llm_cypher" not in options and cfg.use_llm_cypher:
        changes["use_llm_cypher"] = False
    decision = prov.get("decision") or {}
    changes.update({k: decision[k] for k in TUNED_DECISION_KEYS if k in decision and k not in options})
    return changes


def config_for_model(cfg: SGRConfig, options: dict[str, Any], model_name: str | None) -> SGRConfig:
    """``cfg`` with :func:`tuned_overrides` applied (the packaged model keeps it as it is)."""
    return dataclasses.replace(cfg, **tuned_overrides(cfg, options, model_name))
