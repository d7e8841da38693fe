"""Choose SGR's decision parameters (μ, ε, λ, answer_ratio, integrate, plan_trust, gamma_min) on validation
questions, never on test.

    SGR_HOME=… .venv/bin/python bench/sgr_grid.py --metaqa-uri bolt://… --webqsp-uri bolt://… \
        [--per-hop 15 --webqsp 30 --cwq 0 --seed 0] [--path-grammar-pass] \
        [--values mu=0.5,0.9 …]   # search only these values of a parameter (a narrower, faster grid)

1. **Record.** ``sgr`` (the configured LLM — the packaged base model under ``sgr llm serve`` — with its call cache
   on) answers each validation question once; the decision inputs of every round
   (:class:`sgr.methods.sgr.decision.DecisionInputs`: every source's candidates with γ, δ and the voting paths with
   ρ, η) are appended to ``$SGR_HOME/bench/sgr_grid.records.jsonl`` (``--records``), so a rerun skips done ones.
   Validation sets: MetaQA **dev** (``{k}hop_dev.tsv``, a seeded sample per hop, topic in brackets, ``hops = k``;
   graph = the MetaQA KB) and WebQSP **train** (``webqsp_train_paths.jsonl``: question + gold relation paths, no
   answers, no topic: the topic is linked from the text; graph = the WebQSP slice). A WebQSP train question is
   skipped (and counted) when nothing links or when none of its gold paths exists from the linked entities.
   ``--cwq N`` adds a seeded sample of CWQ **dev** (given topics, strict Hits@1; graph = the WebQSP store, which
   holds the CWQ dev graph beside the slice's).
2. **Replay.** :func:`sgr.methods.sgr.decision.decide` is replayed over the recorded rounds (the first round whose
   decision answers wins, as in the answerer) for every point of the grid. Score: MetaQA — strict Hits@1 (the top
   answer is gold; F1 of the kept answer set as the tie-break); WebQSP train — a path-level proxy: the relation
   pattern that carried the top answer (its largest single contribution: a candidate's v or a path's ω) is one of
   the gold paths.
3. **Choose.** The best *faithful* point by the mean Hits@1 over the datasets; ties → the higher mean MetaQA F1 →
   the point closest to today's defaults ("today": :data:`BEFORE`; with ``--held-out``, the tuned model's decision
   parameters in use, so more held-out questions change only what they decide). A point is faithful when a live
   run there would ask δ (lazy verification: PRP-RM only where δ can change ``v ≥ ε``, i.e. γ ∈ [(ε−μ)/(1−μ),
   ε/(1−μ))) only where the recording run asked it, so the replayed δ is what the live run would see; the best
   point over the whole grid is reported beside it. ``bench/results/sgr_grid.json``: ``summary`` (chosen values,
   Hits@1 per dataset for today's defaults and the chosen ones, sample sizes, skips), the whole grid's table.

Replay limits (stated in the output): δ by PRP-RM was measured where the live run's ε and μ let it decide (lazy
verification), ρ of the voting paths by PRP-RM only when nothing was valid in the live run; elsewhere they stay the
prior under every replayed point. A second round is only recorded when the live run's first round answered nothing.
``--path-grammar-pass`` records the same questions again with ``path_grammar=false`` (other LLM calls) and compares
the two settings under the chosen decision parameters.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from dataclasses import asdict, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgr.core.config import sgr_home  # noqa: E402
from sgr.core.errors import EntityNotFound  # noqa: E402
from sgr.core.types import Question  # noqa: E402
from bench.record import write_result  # noqa: E402
from sgr.datasets import load_dataset, shared_data_dir  # noqa: E402
from sgr.evaluation.metrics.f1 import f1  # noqa: E402
from sgr.evaluation.metrics.hits1_strict import hits1_strict  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.base import MethodContext  # noqa: E402
from sgr.methods.sgr.answerer import create  # noqa: E402
from sgr.methods.sgr.config import SGRConfig  # noqa: E402
from sgr.methods.sgr.decision import Decision, DecisionInputs, DecisionParams, decide  # noqa: E402

RESULTS = ROOT / "bench" / "results"
GRID = {"mu": (0.1, 0.3, 0.5, 0.7, 0.9), "epsilon": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
        "lam": (0.1, 0.3, 0.5, 0.7, 0.9), "answer_ratio": (0.5, 0.8, 1.0), "integrate": (False, True),
        "plan_trust": (0.8, 0.85, 0.9, 0.95, 1.01), "gamma_min": (0.0, 0.1, 0.3, 0.5)}
DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "webqsp-train", "cwq-dev")


#: the defaults before this search ("today" in the output; ties go to the point closest to them)
BEFORE = DecisionParams(mu=0.3, epsilon=0.7, lam=0.3, answer_ratio=0.5, integrate=False, plan_trust=1.01)


def today(provenance: Path | None = None) -> DecisionParams:
    """The reference point: a tuned model's decision parameters in use (its provenance's ``decision``), so a
    search on more held-out questions changes only what they decide; else :data:`BEFORE`."""
    if provenance is not None:
        decision = json.loads(provenance.read_text()).get("decision") or {}
        keys = {f.name for f in fields(DecisionParams)}
        if decision:
            return DecisionParams(**{k: v for k, v in decision.items() if k in keys})
    return BEFORE


def current() -> DecisionParams:
    return DecisionParams.from_config(SGRConfig())


# -- questions -----------------------------------------------------------------------------------------------------
def metaqa_dev(hop: int, n: int | None, seed: int) -> list[Question]:
    ds = load_dataset(str(shared_data_dir() / "metaqa" / f"{hop}hop_dev.tsv"), sample=n, seed=seed)
    return ds.questions


def webqsp_train(n: int | None, seed: int) -> list[Question]:
    rows = [json.loads(line) for line in open(shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl",
                                              encoding="utf-8") if line.strip()]
    pick = range(len(rows)) if n is None else sorted(random.Random(seed).sample(range(len(rows)), min(n, len(rows))))
    return [Question(id=rows[i]["id"], text=rows[i]["question"], gold_paths=rows[i]["ground_paths"]) for i in pick]


def cwq_dev(n: int, seed: int) -> list[Question]:
    """A seeded sample of CWQ dev (given topics, gold answers; graph = the WebQSP slice + CWQ dev store)."""
    return load_dataset("cwq", split="dev", sample=n, seed=seed).questions if n else []


def held_out_ids(provenance: Path) -> set[str]:
    """The validation questions a tuned model never trained on (``data.validation_ids`` of its ``model.json``)."""
    try:
        ids = json.loads(provenance.read_text())["data"]["validation_ids"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{provenance}: no data.validation_ids (a model.json of `sgr llm tune`): {exc}") from exc
    return set(ids)


def untrained_metaqa(provenance: Path, hop: int, n: int, seed: int) -> list[Question]:
    """A seeded sample of ``n`` MetaQA dev questions of one hop that the tuned model never trained on: its MetaQA
    training sample is drawn again from its provenance (``data.sources.metaqa_dev`` per hop, ``config.seed``)."""
    from sgr.methods.sgr.tuning import metaqa_dev_examples

    prov = json.loads(provenance.read_text())
    per_hop = int((prov.get("data") or {}).get("sources", {}).get("metaqa_dev", 0)) // 3
    trained = {e.id for e in metaqa_dev_examples(per_hop, seed=int(prov["config"]["seed"]))} if per_hop else set()
    rest = [q for q in metaqa_dev(hop, None, seed) if q.id not in trained]
    return [rest[i] for i in sorted(random.Random(seed + hop).sample(range(len(rest)), min(n, len(rest))))]


def question_sets(args: argparse.Namespace) -> dict[str, list[Question]]:
    """The validation questions per dataset: seeded samples (``--per-hop``, ``--webqsp``), or with ``--held-out``
    every MetaQA dev / WebQSP train question of the tuned model's held-out split, plus ``--held-out-metaqa`` MetaQA
    dev questions per hop outside its training sample."""
    if args.held_out:
        ids = held_out_ids(args.held_out)
        sets = {f"metaqa-{h}hop": [q for q in metaqa_dev(h, None, args.seed) if q.id in ids]
                + untrained_metaqa(args.held_out, h, args.held_out_metaqa, args.seed) for h in (1, 2, 3)}
        return sets | {"webqsp-train": [q for q in webqsp_train(None, args.seed) if q.id in ids]}
    sets = {f"metaqa-{h}hop": metaqa_dev(h, args.per_hop, args.seed) for h in (1, 2, 3)}
    sets |= {"webqsp-train": webqsp_train(args.webqsp, args.seed)}
    return sets | ({"cwq-dev": cwq_dev(args.cwq, args.seed)} if args.cwq else {})


def check_served(provenance: Path, replay_only: bool) -> None:
    """``--held-out`` records with the weights of that provenance: the configured LLM must be the local server
    serving them (SGR then also prompts them as their provenance says)."""
    from sgr.llm.client import shared_llm
    from sgr.llm.server import read_state

    if replay_only:
        return
    info = read_state()
    if info is None or not info.provenance or Path(info.provenance).resolve() != provenance.resolve() \
            or shared_llm().name != info.model:
        raise SystemExit(f"--held-out {provenance}: serve those weights first (`sgr llm serve --model "
                         f"{provenance.with_suffix('.gguf')}`, SGR_LLM_BASE_URL unset)")


# -- recording -----------------------------------------------------------------------------------------------------
def done_ids(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[f"{r['pass']}/{r['dataset']}/{r['id']}"] = r
    return out


def record_one(answerer: Any, dataset: str, q: Question, pass_name: str) -> dict[str, Any]:
    """Run ``sgr`` on one question; the decision inputs of each round, or why it was skipped."""
    from sgr.methods.sgr.trie import relation_paths

    rec: dict[str, Any] = {"pass": pass_name, "dataset": dataset, "id": q.id, "question": q.text,
                           "recorded_with": {"mu": answerer.config.mu, "epsilon": answerer.config.epsilon}}
    if dataset == "webqsp-train":
        rec["gold_paths"] = q.gold_paths
        try:
            linked = answerer.link(q)
        except EntityNotFound:
            return rec | {"skipped": "no_link"}
        trie = relation_paths(answerer.store, [e.id for e in linked], max_hops=2, max_relations=3)
        if not any(tuple(p) in trie for p in q.gold_paths):
            return rec | {"skipped": "gold_path_absent", "linked": [e.label for e in linked]}
        q = replace(q, topic_entities=[e.id for e in linked])  # the same link in the run (no second probe)
    else:
        rec["gold"] = q.answers
    t0 = time.perf_counter()
    try:
        res = answerer.run(q)
    except EntityNotFound:
        return rec | {"skipped": "no_link"}
    pred = res.prediction
    rec.update(seconds=round(time.perf_counter() - t0, 2), llm_calls=pred.usage.llm_calls,
               live={"answers": pred.answer_texts[:5], "route": pred.route,
                     "route_source": pred.extra.get("route_source")},
               rounds=[i.to_dict(max_votes=None) for i in res.round_inputs])
    return rec


def record(args: argparse.Namespace, path: Path, pass_name: str, options: dict[str, Any],
           sets: dict[str, list[Question]]) -> None:
    done = done_ids(path)
    uri = {"webqsp-train": args.webqsp_uri, "cwq-dev": args.webqsp_uri}
    hops = {f"metaqa-{h}hop": {"hops": h} for h in (1, 2, 3)}
    stores: dict[str, GraphStore] = {}
    with open(path, "a", encoding="utf-8") as out:
        for dataset, questions in sets.items():
            todo = [q for q in questions if f"{pass_name}/{dataset}/{q.id}" not in done]
            if not todo:
                continue
            graph = uri.get(dataset, args.metaqa_uri)
            store = stores.setdefault(graph, GraphStore(graph, password=args.password_for(graph)))
            answerer = create("sgr", MethodContext(store=store, options={**options, **hops.get(dataset, {})}))
            print(f"[grid] {pass_name} {dataset}: {len(todo)} to record", flush=True)
            for q in todo:
                rec = record_one(answerer, dataset, q, pass_name)
                out.write(json.dumps(rec) + "\n")
                out.flush()


# -- replay --------------------------------------------------------------------------------------------------------
_PARSED: dict[int, tuple[dict[str, Any], DecisionInputs]] = {}


def parsed(round_: dict[str, Any]) -> DecisionInputs:
    """A recorded round's inputs, parsed once per search (the grid replays each round thousands of times)."""
    hit = _PARSED.get(id(round_))
    if hit is None or hit[0] is not round_:
        hit = _PARSED[id(round_)] = (round_, DecisionInputs.from_dict(round_))
    return hit[1]


def replay(rec: dict[str, Any], params: DecisionParams) -> tuple[Decision | None, DecisionInputs | None]:
    """The first recorded round whose decision answers (the answerer's rounds), else the last round's decision."""
    last: tuple[Decision | None, DecisionInputs | None] = (None, None)
    for r in rec.get("rounds", []):
        inputs = parsed(r)
        d = decide(inputs, params)
        last = (d, inputs)
        if d.answers:
            break
    return last


def carried_pattern(d: Decision, inputs: DecisionInputs) -> tuple[str, ...] | None:
    """The relation pattern of the top answer's largest single contribution (a candidate's v or a path's ω)."""
    top = d.answers[0]
    parts = [(d.v[i], inputs.candidates[i].relations) for i in top.candidates]
    parts += [(d.omegas[i], inputs.votes[i].relations) for i in top.votes]
    return max(parts, key=lambda x: x[0])[1] if parts else None


def score(rec: dict[str, Any], d: Decision | None, inputs: DecisionInputs | None) -> tuple[float, float | None]:
    """(Hits@1, F1 or None) of one recorded question's replayed decision."""
    if d is None or inputs is None or not d.answers:
        return 0.0, (0.0 if "gold" in rec else None)
    if "gold_paths" in rec:
        pat = carried_pattern(d, inputs)
        return float(pat is not None and list(pat) in rec["gold_paths"]), None
    got = [a.text for a in d.answers]
    return hits1_strict(got, rec["gold"]), f1(got, rec["gold"])


def evaluate(records: list[dict[str, Any]], params: DecisionParams) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for ds in DATASETS:
        rs = [r for r in records if r["dataset"] == ds and not r.get("skipped")]
        if not rs:
            continue
        replayed = [replay(r, params) for r in rs]
        scores = [score(r, *x) for r, x in zip(rs, replayed)]
        f1s = [f for _, f in scores if f is not None]
        out[ds] = {"hits1": round(statistics.fmean(h for h, _ in scores), 4), "n": len(rs)}
        if f1s:
            out[ds]["f1"] = round(statistics.fmean(f1s), 4)
        answered = [d for d, _ in replayed if d is not None and d.answers]
        out[ds]["route_llm_share"] = round(sum(d.route_source == "model" for d in answered) / max(1, len(answered)), 4)
        out[ds]["collaborative_share"] = round(sum(d.route == "collaborative" for d in answered) / max(1, len(rs)), 4)
    return out


def distance(p: DecisionParams, ref: DecisionParams) -> float:
    """L1 distance over the searched parameters (:data:`GRID`; ``integrate`` counts 1 when it differs)."""
    return sum(abs(float(getattr(p, k)) - float(getattr(ref, k))) for k in GRID)


def delta_band(mu: float, epsilon: float) -> tuple[float, float]:
    """The γ range where δ can change ``v ≥ ε`` (lazy verification asks PRP-RM there and nowhere else)."""
    hi = epsilon / (1 - mu)  # exclusive; above 1 the band holds γ = 1 itself (kept as 1 + 1e-6)
    return (epsilon - mu) / (1 - mu), hi if hi <= 1.0 + 1e-12 else 1.0 + 1e-6


def faithful(p: DecisionParams, recorded: tuple[float, float]) -> bool:
    """Whether a live run at ``p`` would ask δ only where the recording asked it: its δ band lies inside the
    recording's, so replaying the recorded δ (prior outside that band) is what the live run would see."""
    lo, hi = delta_band(p.mu, p.epsilon)
    lo0, hi0 = delta_band(*recorded)
    return lo >= lo0 - 1e-9 and hi <= hi0 + 1e-9


def search(records: list[dict[str, Any]], ref: DecisionParams = BEFORE) -> dict[str, Any]:
    rw = {(r.get("recorded_with") or {}).get("mu", 0.3) for r in records}, \
        {(r.get("recorded_with") or {}).get("epsilon", 0.7) for r in records}
    recorded = (rw[0].pop(), rw[1].pop()) if len(rw[0]) == len(rw[1]) == 1 else (ref.mu, ref.epsilon)
    rows = []
    for point in itertools.product(*GRID.values()):
        p = DecisionParams(**dict(zip(GRID, point)))
        ev = evaluate(records, p)
        mean_h = statistics.fmean(v["hits1"] for v in ev.values())
        mq_f1 = [v["f1"] for v in ev.values() if "f1" in v]
        rows.append({"params": asdict(p), "mean_hits1": round(mean_h, 4),
                     "metaqa_f1": round(statistics.fmean(mq_f1), 4) if mq_f1 else 0.0, "datasets": ev,
                     "distance": round(distance(p, ref), 4), "faithful": faithful(p, recorded)})
    rows.sort(key=lambda r: (-r["mean_hits1"], -r["metaqa_f1"], r["distance"]))
    base = evaluate(records, ref)
    return {"best": next(r for r in rows if r["faithful"]), "best_unrestricted": rows[0], "recorded_with": recorded,
            "today": {"params": asdict(ref), "datasets": base,
                                       "mean_hits1": round(statistics.fmean(v["hits1"] for v in base.values()), 4)},
            "table": rows}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metaqa-uri", required=True)
    ap.add_argument("--webqsp-uri", required=True)
    ap.add_argument("--metaqa-password-file", default=None)
    ap.add_argument("--webqsp-password-file", default=None)
    ap.add_argument("--per-hop", type=int, default=15)
    ap.add_argument("--webqsp", type=int, default=30)
    ap.add_argument("--cwq", type=int, default=0, help="CWQ dev questions (seeded sample; scored by strict Hits@1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--records", type=Path, default=None, help="default: $SGR_HOME/bench/sgr_grid.records.jsonl")
    ap.add_argument("--out", type=Path, default=RESULTS / "sgr_grid.json")
    ap.add_argument("--path-grammar-pass", action="store_true", help="also record with path_grammar=false")
    ap.add_argument("--pg-per-hop", type=int, default=None, help="… on the first N of each MetaQA sample")
    ap.add_argument("--pg-webqsp", type=int, default=None, help="… on the first N of the WebQSP train sample")
    ap.add_argument("--replay-only", action="store_true", help="no LLM: replay the records there are")
    ap.add_argument("--values", action="append", default=[], metavar="KEY=V1,V2",
                    help="search only these values of one parameter of the grid (repeatable; e.g. integrate=false)")
    ap.add_argument("--held-out", type=Path, default=None,
                    help="a tuned model's model.json: record its held-out validation questions (data.validation_ids) "
                         "instead of the seeded samples; the configured LLM must serve those weights")
    ap.add_argument("--held-out-metaqa", type=int, default=0,
                    help="with --held-out: also this many MetaQA dev questions per hop outside its training sample")
    ap.add_argument("--set-provenance", action="store_true",
                    help=f"with --held-out: write the chosen {', '.join(GRID)} into that model.json ('decision'), "
                         "which SGR then uses for those weights")
    args = ap.parse_args(argv)
    for item in args.values:  # a narrower grid: replaying every point over many records takes long
        key, _, vals = item.partition("=")
        if key not in GRID or not vals:
            ap.error(f"--values {item!r}: KEY=V1,V2 with KEY one of {', '.join(GRID)}")
        GRID[key] = tuple(v.lower() == "true" if key == "integrate" else float(v) for v in vals.split(","))
    if args.set_provenance and not args.held_out:
        ap.error("--set-provenance needs --held-out")
    if args.held_out:
        check_served(args.held_out, args.replay_only)
        args.records = args.records or args.held_out.parent / "sgr_grid.records.jsonl"
        if args.out == RESULTS / "sgr_grid.json":
            args.out = RESULTS / "sgr_grid_tuned.json"
    if args.records is None:
        args.records = sgr_home() / "bench" / "sgr_grid.records.jsonl"
        args.records.parent.mkdir(parents=True, exist_ok=True)
    pw = {args.metaqa_uri: args.metaqa_password_file, args.webqsp_uri: args.webqsp_password_file}
    args.password_for = lambda uri: Path(pw[uri]).read_text().strip() if pw.get(uri) else None
    t0 = time.perf_counter()
    sets = question_sets(args)
    if not args.replay_only:
        record(args, args.records, "default", {}, sets)
        if args.path_grammar_pass:
            n_pg = {"webqsp-train": args.pg_webqsp or args.webqsp}
            first = {ds: qs[:n_pg.get(ds, args.pg_per_hop or args.per_hop)] for ds, qs in sets.items()}
            record(args, args.records, "no-path-grammar", {"path_grammar": False}, first)
    wanted = {ds: {q.id for q in qs} for ds, qs in sets.items()}
    all_recs = [r for r in done_ids(args.records).values() if r["id"] in wanted.get(r["dataset"], ())]
    recs = [r for r in all_recs if r["pass"] == "default"]
    found = search(recs, today(args.held_out))
    best = found["best"]
    skipped: dict[str, dict[str, int]] = {}
    for r in recs:
        if r.get("skipped"):
            skipped.setdefault(r["dataset"], {}).setdefault(r["skipped"], 0)
            skipped[r["dataset"]][r["skipped"]] += 1
    calls = [r["llm_calls"] for r in recs if "llm_calls" in r]
    summary: dict[str, Any] = {
        "chosen": best["params"], "today": found["today"]["params"], "current_defaults": asdict(current()),
        "mean_hits1": {"today": found["today"]["mean_hits1"], "chosen": best["mean_hits1"]},
        "hits1": {ds: {"today": found["today"]["datasets"].get(ds, {}).get("hits1"),
                       "chosen": best["datasets"].get(ds, {}).get("hits1")} for ds in DATASETS},
        "route_llm_share": {ds: {"today": found["today"]["datasets"].get(ds, {}).get("route_llm_share"),
                                 "chosen": best["datasets"].get(ds, {}).get("route_llm_share")} for ds in DATASETS},
        "collaborative_share": {ds: {"today": found["today"]["datasets"].get(ds, {}).get("collaborative_share"),
                                     "chosen": best["datasets"].get(ds, {}).get("collaborative_share")}
                                for ds in DATASETS},
        "sizes": {ds: sum(1 for r in recs if r["dataset"] == ds and not r.get("skipped")) for ds in DATASETS},
        "skipped": skipped, "llm_calls_median": statistics.median(calls) if calls else None,
        "ties_at_best": sum(1 for r in found["table"] if r["mean_hits1"] == best["mean_hits1"]
                            and r["metaqa_f1"] == best["metaqa_f1"] and r["faithful"]),
        "best_unrestricted": {"params": found["best_unrestricted"]["params"],
                              "mean_hits1": found["best_unrestricted"]["mean_hits1"],
                              "hits1": {ds: v["hits1"] for ds, v in found["best_unrestricted"]["datasets"].items()}},
        "recorded_with": dict(zip(("mu", "epsilon"), found["recorded_with"])),
    }
    pg = [r for r in all_recs if r["pass"] == "no-path-grammar"]
    if pg:
        chosen = DecisionParams(**best["params"])
        ids = {(r["dataset"], r["id"]) for r in pg}
        same = [r for r in recs if (r["dataset"], r["id"]) in ids]
        on, off = evaluate(same, chosen), evaluate(pg, chosen)
        summary["path_grammar"] = {ds: {"on": on.get(ds, {}).get("hits1"), "off": off.get(ds, {}).get("hits1"),
                                        "n": off.get(ds, {}).get("n"),
                                        "route_llm_share_on": on.get(ds, {}).get("route_llm_share"),
                                        "route_llm_share_off": off.get(ds, {}).get("route_llm_share")}
                                   for ds in DATASETS if ds in off}
        mean_on = statistics.fmean(on[ds]["hits1"] for ds in off if ds in on)
        mean_off = statistics.fmean(off[ds]["hits1"] for ds in off if ds in on)
        summary["path_grammar"]["mean_hits1"] = {"on": round(mean_on, 4), "off": round(mean_off, 4),
                                                 "chosen": "on" if mean_on >= mean_off else "off"}  # tie: today's on
    result = {"summary": summary, "grid": {k: list(v) for k, v in GRID.items()}, "best": best,
              "faithful_points": sum(r["faithful"] for r in found["table"]), "points": len(found["table"]),
              "today": found["today"], "table": found["table"][:40],
              "config": {"per_hop": args.per_hop, "webqsp": args.webqsp, "cwq": args.cwq, "seed": args.seed,
                         "metaqa": "MetaQA dev (k-hop sample, hops=k)", "webqsp_set": "WebQSP train (gold paths)",
                         "records": str(args.records.relative_to(ROOT) if args.records.is_relative_to(ROOT)
                                        else args.records),
                         "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "seconds": round(time.perf_counter() - t0, 1)}}
    if args.held_out:
        result["config"]["held_out"] = str(args.held_out)
        if args.set_provenance:
            prov = json.loads(args.held_out.read_text())
            prov["decision"] = {**best["params"], "chosen_on": summary["sizes"], "mean_hits1": best["mean_hits1"]}
            args.held_out.write_text(json.dumps(prov, indent=2, default=str))
            print(f"[grid] decision parameters written to {args.held_out}", flush=True)
    write_result(args.out, result, indent=1)
    print(json.dumps(summary, indent=1))
    return result


if __name__ == "__main__":
    main()
