"""Candidate confidence signals for "the graph cannot answer", measured on stored runs before any is added to sgr.

``bench/confidence.py`` fits the calibrator on what a prediction recorded. A signal that is not recorded yet can be
judged first here, from the stored predictions of a finished ``bench/confidence.py`` run and the stores they were
asked against (read only; no model served). Each candidate is computed from the record (question, linked topic ids,
top answer, the decision inputs' relation path of the top answer) and one or two store reads:

* ``absence_local``: *relation absence around the topic* — the question's best similarity (the run's relation
  retriever, the topic masked as SGR masks it) to any relation type of the whole graph, minus its best similarity to
  the relation types within two edges of the linked entities (the ones R_q is ranked among). When the answer's edges
  are gone, the question's relation may still exist elsewhere in the graph but no longer at the topic.
* ``absence_path``: the same best over the graph minus the best over the relations of the top answer's path.
* ``answer_type_fit``: the cosine (MiniLM) of the question's asked type (its type constraint: "currency", "person")
  with the nearest role the answer entity plays in the graph (the type or property each of its relations names it
  by, :func:`sgr.methods.sgr.subgraph.end_role_text`); 0.5 when the question asks no type.
* ``linked_reached``: the share of the linked entities the answer touches, by an edge or through one CVT node.

Figures, on dev only (the report sets are not read): each candidate's AUROC alone — unanswerable answers against the
correct CWQ dev answers (``uc``), correct against wrong CWQ dev (``cwq``) and MetaQA dev (``metaqa``) answers, and the
share of the unanswerable questions whose value is worse than on the full store (``paired``: the run's
``answerable`` folder, else its CWQ dev run) — and the compact calibrator's cross-fitted AUROCs with each added,
averaged over 8 splits.

    python bench/confidence_signals.py --runs-dir R/sgr@MODEL --extra-dev DIR --webqsp-uri … --metaqa-uri … \\
        --unanswerable-uri …
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from confidence import fit, halves, labelled, labelled_all, stored_run  # noqa: E402
from record import RESULTS, write_result  # noqa: E402
from sgr.evaluation.metrics.calibration import auroc  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.llm.encoders import embed_texts  # noqa: E402
from sgr.methods.confidence import COMPACT_SIGNALS  # noqa: E402
from sgr.methods.sgr.config import SGRConfig  # noqa: E402
from sgr.methods.sgr.decision import DecisionInputs  # noqa: E402
from sgr.methods.sgr.exemplars import mask_entity  # noqa: E402
from sgr.methods.sgr.schema import constraint_text, rule_constraints  # noqa: E402
from sgr.methods.sgr.subgraph import end_role_text, neighbourhood_relation_types  # noqa: E402
from sgr.methods.sgr.trace import answer_evidence  # noqa: E402
from sgr.retrieval.relations import load_retriever, sgr_retriever  # noqa: E402

CANDIDATES = ("absence_local", "absence_path", "answer_type_fit", "linked_reached")
#: higher means "more likely correct" for these; the absences point the other way
HIGHER_IS_BETTER = {"absence_local": False, "absence_path": False, "answer_type_fit": True, "linked_reached": True}
ROLES = ("MATCH (a:Entity {id: $a}) CALL (a) { MATCH (a)-[r]->() RETURN DISTINCT type(r) AS t, 'in' AS d LIMIT 300 "
         "UNION MATCH (a)<-[r]-() RETURN DISTINCT type(r) AS t, 'out' AS d LIMIT 300 } RETURN t, d")
REACHED = ("MATCH (a:Entity {id: $a}) UNWIND $ids AS i MATCH (e:Entity {id: i}) "
           "RETURN i, EXISTS { (a)--(e) } OR EXISTS { (a)--(:CVT)--(e) } AS near")


@lru_cache(maxsize=None)
def unit(text: str) -> np.ndarray:
    return embed_texts([text])[0]


def candidate_signals(p: dict, store: GraphStore, retriever: Any) -> dict[str, float]:
    """The :data:`CANDIDATES` of one answered stored prediction (module docstring)."""
    linked = (p.get("extra") or {}).get("linked") or []
    ids, top = [e["id"] for e in linked], p["answers"][0]["id"]
    name = store.read("MATCH (e:Entity {id: $i}) RETURN e.name AS n", {"i": ids[0]}) if ids else []
    masked = mask_entity(p["question"], (name[0]["n"] if name else None) or (ids[0] if ids else None))
    sim = {r.name: r.similarity for r in retriever.retrieve(masked, len(retriever.relations))}
    best = max(sim.values(), default=0.0)
    around = neighbourhood_relation_types(store, ids, depth=2)
    inputs = ((p.get("extra") or {}).get("decision") or {}).get("inputs")
    path = answer_evidence(DecisionInputs.from_dict(inputs), top, SGRConfig().lam).relations if inputs else ()
    asked = [c.value for c in rule_constraints(constraint_text(p["question"], [e["mention"] for e in linked]))
             if c.kind == "type" and c.value]
    roles = {end_role_text(r["t"], r["d"]) for r in store.read(ROLES, {"a": top})} - {""}
    type_fit = max((float(unit(asked[0]) @ unit(r)) for r in roles), default=0.0) if asked else 0.5
    near = [r["near"] for r in store.read(REACHED, {"a": top, "ids": [i for i in ids if i != top]})]
    return {"absence_local": best - max((sim.get(t, 0.0) for t in around), default=0.0),
            "absence_path": best - max((sim.get(r, 0.0) for r in path), default=0.0),
            "answer_type_fit": type_fit, "linked_reached": float(np.mean(near)) if near else 1.0}


def answered(preds: dict[str, dict]) -> list:
    """(question id, signals, label) of the answered ones among a run's stored predictions."""
    return [x for x in labelled(preds) if x[1].get("answered")]


def with_candidates(folder: Path, uri: str, select: Callable[[dict[str, dict]], list] = answered) -> list:
    """The rows ``select`` takes from ``folder``'s stored predictions ((question id, signals, label); default: the
    answered ones) with the candidates added to their signals, computed against the store at ``uri`` with the run's
    own relation retriever."""
    preds = stored_run(folder)
    rows = select(preds)
    option = json.loads((folder / "run.json").read_text(encoding="utf-8"))["options"].get("relation_retriever")
    with GraphStore(uri) as store:
        retriever = sgr_retriever(store, option) or load_retriever(store, "cosine")
        return [(q, {**s, **candidate_signals(preds[q], store, retriever)}, y) for q, s, y in rows]


def alone(name: str, dev: dict[str, list], paired: list[tuple[float, float]]) -> dict[str, float | None]:
    """One candidate's AUROCs alone (module docstring), oriented so that 0.5 is chance and above it helps."""
    sign = 1.0 if HIGHER_IS_BETTER[name] else -1.0

    def score(rows: list) -> float | None:
        found = auroc([(sign * s[name], y) for _, s, y in rows])
        return round(found, 3) if found is not None else None

    correct = [r for r in dev["cwq"] if r[2] == 1.0]
    worse = [(sign * u < sign * a) + 0.5 * (u == a) for u, a in paired]
    return {"uc": score(correct + dev["unanswerable"]), "cwq": score(dev["cwq"]), "metaqa": score(dev["metaqa"]),
            "paired": round(float(np.mean(worse)), 3) if worse else None}


def crossfitted(signals: tuple[str, ...], dev: dict[str, list], splits: int = 8) -> dict[str, float]:
    """The calibrator over ``signals`` (C = 1), cross-fitted in halves as ``bench/confidence.py`` does: mean AUROC of
    CWQ dev, MetaQA dev and unanswerable-against-correct over ``splits`` splits."""
    rows = [r for part in dev.values() for r in part]
    found: dict[str, list[float]] = {"cwq": [], "metaqa": [], "uc": []}
    for seed in range(1, splits + 1):
        a, b = halves(rows, seed=seed)
        cal_a, cal_b, in_a = fit(a, 0.95, {}, signals), fit(b, 0.95, {}, signals), {r[0] for r in a}
        p = {q: (cal_b if q in in_a else cal_a).probability(s) for q, s, _ in rows}

        def score(part: list, label: Callable[[float], float] = lambda y: y) -> float:
            return auroc([(p[q], label(y)) for q, _, y in part])

        found["cwq"].append(score(dev["cwq"]))
        found["metaqa"].append(score(dev["metaqa"]))
        found["uc"].append(score([r for r in dev["cwq"] if r[2] == 1.0] + dev["unanswerable"]))
    return {k: round(float(np.mean(v)), 3) for k, v in found.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs-dir", type=Path, required=True, help="a bench/confidence.py run's folder of one model")
    ap.add_argument("--cwq-dev", default="cwq-dev-sample100", help="its CWQ dev run's folder name")
    ap.add_argument("--extra-dev", type=Path, action="append", default=[], help="more CWQ dev runs of the model")
    ap.add_argument("--webqsp-uri", required=True, help="the WebQSP slice + CWQ dev store")
    ap.add_argument("--metaqa-uri", required=True)
    ap.add_argument("--unanswerable-uri", required=True)
    ap.add_argument("--out", type=Path, default=RESULTS / "confidence_signals.json")
    args = ap.parse_args()
    r = args.runs_dir
    cwq = with_candidates(r / args.cwq_dev, args.webqsp_uri)
    for folder in args.extra_dev:
        seen = {q for q, _, _ in cwq}
        cwq += with_candidates(folder, args.webqsp_uri, lambda preds: [x for x in answered(preds) if x[0] not in seen])
    metaqa = [row for hop in (1, 2, 3) for row in with_candidates(r / f"metaqa-{hop}hop-dev", args.metaqa_uri)]
    unanswerable = with_candidates(r / "unanswerable", args.unanswerable_uri,
                                   lambda preds: [(q, s, 0.0) for q, s in labelled_all(preds) if s.get("answered")])
    # the same questions on the full store: the run's own folder of them, else the CWQ dev run's (as confidence.py)
    full = {q: s for q, s, _ in cwq}
    if (r / "answerable" / "predictions.jsonl").is_file():
        full = {q: s for q, s, _ in with_candidates(r / "answerable", args.webqsp_uri)}
    dev = {"cwq": cwq, "metaqa": metaqa, "unanswerable": unanswerable}
    figures = {name: alone(name, dev, [(s[name], full[q][name]) for q, s, _ in unanswerable if q in full])
               for name in CANDIDATES}
    fits = {"compact": crossfitted(COMPACT_SIGNALS, dev)}
    for name in CANDIDATES:
        fits[f"compact + {name}"] = crossfitted(COMPACT_SIGNALS + (name,), dev)
    fits["compact + all four"] = crossfitted(COMPACT_SIGNALS + CANDIDATES, dev)
    summary: dict[str, Any] = {"cwq-dev/answered": len(cwq), "metaqa-dev/answered": len(metaqa),
                               "unanswerable/answered": len(unanswerable),
                               "paired": sum(q in full for q, _, _ in unanswerable)}
    summary |= {f"{n}/{k}": v for n, f in figures.items() for k, v in f.items()}
    summary |= {f"{n}/crossfitted_{k}": v for n, f in fits.items() for k, v in f.items()}
    write_result(args.out, {"summary": summary, "alone": figures, "crossfitted": fits,
                            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
