"""Fit and check G_q's learned path ranker (:mod:`sgr.methods.sgr.path_ranker`) on dev questions only.

For each dev question, SGR's own stages (given topics → S_q → G_q, as ``sgr-compiled`` runs them) give the scored
schema paths with their terms; a path is positive when its answer set holds a gold answer (for WebQSP train
questions, which come without answers: when it is one of their gold relation paths). Training questions: CWQ dev on
WebQSP *train* bases (``WebQTrn-…``), ``--metaqa-train`` MetaQA dev questions per hop and ``--webqsp-train`` WebQSP
train questions (linked from their text: the single-relation questions the compositional dev set lacks); held out:
CWQ dev on WebQSP *test* bases (never trained on), ``--metaqa-heldout`` other MetaQA dev questions per hop and
``--webqsp-heldout`` other WebQSP train questions. The check is the share of questions whose top path is right, with
the hand-set s(P) against the ranker, per CWQ type, MetaQA hop and WebQSP train, with the linear listwise ranker
beside them (:func:`sgr.core.logistic.fit_listwise`, the first ranker). The ranker's size and training length
(``--hidden``, ``--epochs``) are chosen among ``--grid`` by two-fold cross-validation on the *training* questions
only (``--no-select`` takes the given ones). Needs two stores: the WebQSP slice + CWQ dev (NEO4J_URI) and the MetaQA
KB (``--metaqa-uri``).

    python bench/path_ranker.py --metaqa-uri bolt://127.0.0.1:PORT            # extract, fit, check, write the asset
    python bench/path_ranker.py --metaqa-uri … --reuse                          # refit on the cached extraction

    python bench/path_ranker.py --metaqa-uri … --hops 3 --no-select --hidden 32 --epochs 60 \
        --out bench/results/path_ranker_deep.json                               # the ranker of a three-deep G_q

Writes ``sgr/assets/path_ranker.json`` (``--hops 3``: ``path_ranker_deep.json``; unless ``--no-write-model``) and
``bench/results/path_ranker.json`` (summary: ``heldout_top1_ranker`` / ``heldout_top1_linear`` /
``heldout_top1_handset`` overall, per CWQ type and per MetaQA hop; with ``--hops 3`` also
``heldout_adaptive/<kind>/top1``, as G_q runs at the default ``deeper_at`` — the two-hop ranker's two-hop paths below
it, this ranker's paths of up to three hops above it — and ``heldout_two_hops/<kind>/top1``, never deeper).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from dev_questions import DevItem, cwq_dev, extract_cached, gold_end_questions, metaqa_dev, webqsp_train  # noqa: E402
from record import RESULTS, write_result  # noqa: E402
from sgr.core.errors import EntityNotFound  # noqa: E402
from sgr.core.logistic import asset_file, fit_listwise  # noqa: E402
from sgr.core.types import Prediction, Question  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.base import MethodContext  # noqa: E402
from sgr.methods.registry import create_method  # noqa: E402
from sgr.methods.sgr.config import ExpansionConfig  # noqa: E402
from sgr.methods.sgr.path_ranker import FEATURES, asset_path, load_path_ranker, train_path_ranker  # noqa: E402
from sgr.methods.sgr.trace import SGRResult  # noqa: E402
from sgr.methods.sgr.word_relations import ASSET as WORDS_ASSET  # noqa: E402
from sgr.methods.sgr.word_relations import WordRelations, asking_words, fit_word_relations  # noqa: E402
from sgr.retrieval.entities import EntityLinker  # noqa: E402


def extract(store: GraphStore, items: Sequence[DevItem], label: str, hops: int = 2) -> list[dict]:
    """Each question's schema paths (terms, hand-set score, whether they reach a gold answer), G_q expanded ``hops``
    deep."""
    answerer = create_method("sgr-compiled", MethodContext(store=store, options={"path_ranker": False, "hops": hops}))
    gold_ids = EntityLinker(store).resolve({a for q, _, _ in items for a in q.answers})
    inverses = answerer.inverses
    out, t0 = [], time.time()
    for n, (q, kind, held) in enumerate(items, 1):
        gold = {i for a in q.answers for i in gold_ids.get(a, [])}
        gold_paths = {inverses.canonical(p) for p in q.gold_paths}  # WebQSP train: right relation paths, no answers
        if not gold and not gold_paths:
            continue
        res = SGRResult(question=q, method="x", prediction=Prediction(question_id=q.id, method="x"),
                        config=answerer.config, hops=answerer.config.hops)
        try:
            res.entities = answerer.link(q)
        except EntityNotFound:
            continue
        res.schema = answerer.schema(q, res.entities)
        answerer.subgraph(q, res)
        paths = [{"parts": sp.parts, "handset": sp.score, "relations": sp.relations,
                  "hit": int(bool(gold & set(sp.walks)) or inverses.canonical(sp.relations) in gold_paths)}
                 for sp in res.subgraph.schema_paths]
        if paths:
            out.append({"id": q.id, "kind": kind, "heldout": held, "paths": paths})
        if n % 50 == 0:
            print(f"{label}: {n}/{len(items)} ({(time.time() - t0) / n:.2f} s/question)", flush=True)
    return out


def top1(rows: list[dict], score) -> float:  # noqa: ANN001
    if not rows:
        return float("nan")
    return float(np.mean([max(r["paths"], key=score)["hit"] for r in rows]))


def p_deep(row: dict) -> float:
    """P(three or more hops | q) of an extracted question, read from its paths' ``p_hops`` terms."""
    deep = [p["parts"]["p_hops"] for p in row["paths"] if p["parts"]["hops3"]]
    if deep:
        return deep[0]
    by = {h: p["parts"]["p_hops"] for p in row["paths"] for h in (1, 2) if p["parts"][f"hops{h}"]}
    return 1.0 - by[1] - by[2] if len(by) == 2 else 0.0


def adaptive_top1(rows: list[dict], shallow, deep, deeper_at: float) -> float:  # noqa: ANN001
    """Top-1 as G_q runs with ``deeper_at`` (``ExpansionConfig``): a question below it keeps its paths of at most two
    hops, ranked by ``shallow``; one at or above it keeps them all, ranked by ``deep``."""
    if not rows:
        return float("nan")
    hits = []
    for r in rows:
        if p_deep(r) >= deeper_at:
            hits.append(max(r["paths"], key=lambda p: deep.score(p["parts"]))["hit"])
        else:
            paths = [p for p in r["paths"] if not p["parts"]["hops3"]]
            hits.append(max(paths, key=lambda p: shallow.score(p["parts"]))["hit"] if paths else 0)
    return float(np.mean(hits))


def groups_of(rows: list[dict]) -> tuple[list[list[dict]], list[list[int]]]:
    return [[p["parts"] for p in r["paths"]] for r in rows], [[p["hit"] for p in r["paths"]] for r in rows]


def select(train: list[dict], grid: list[tuple[int, int]]) -> tuple[tuple[int, int], dict[str, float]]:
    """(hidden, epochs) of ``grid`` with the best two-fold top-1 on the training questions (one seed per fit; the
    folds split by a hash of the question id)."""
    fold = [int(hashlib.md5(r["id"].encode()).hexdigest(), 16) % 2 for r in train]
    halves = [[r for r, f in zip(train, fold) if f == k] for k in (0, 1)]
    cv: dict[str, float] = {}
    for hidden, epochs in grid:
        accs = []
        for fit_on, check_on in ((halves[0], halves[1]), (halves[1], halves[0])):
            r = train_path_ranker(*groups_of(fit_on), hidden=hidden, epochs=epochs, seeds=(0,))
            accs.append(top1(check_on, lambda p, r=r: r.score(p["parts"])))
        cv[f"{hidden}x{epochs}"] = round(float(np.mean(accs)), 4)
        print(f"cv hidden={hidden} epochs={epochs}: {cv[f'{hidden}x{epochs}']}", flush=True)
    best = max(grid, key=lambda g: cv[f"{g[0]}x{g[1]}"])
    return best, cv


def fit_lexicon(used: set[str], write: bool) -> WordRelations:
    """The word–relation lexicon (``lex_last``) of the dev questions with gold paths that the ranker neither trains
    nor is checked on (:func:`dev_questions.gold_end_questions`), written to ``sgr/assets/`` with ``write``."""
    lexicon = fit_word_relations(gold_end_questions(used), provenance={
        "trained_by": "python bench/path_ranker.py",
        "data": "WebQSP train gold paths and 1,000 MetaQA dev questions per hop, none the path ranker uses"})
    if write:
        lexicon.save(asset_file(WORDS_ASSET))
        print(f"wrote {asset_file(WORDS_ASSET)} ({len(lexicon.scores)} relations)")
    return lexicon


def add_word_scores(rows: list[dict], questions: dict[str, Question], lexicon: WordRelations) -> None:
    """Each path's ``lex_last`` from ``lexicon``, as G_q computes it: from the question's words outside its topic
    entities' names (an extraction cached before the term had none)."""
    for r in rows:
        q = questions[r["id"]]
        words = asking_words(q.text, q.topic_entities)  # once per question, as G_q reads them once per build
        for p in r["paths"]:
            p["parts"]["lex_last"] = lexicon.score(words, p["relations"][-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--metaqa-uri", required=True, help="bolt URI of a store with the MetaQA KB")
    ap.add_argument("--metaqa-train", type=int, default=150, help="MetaQA dev training questions per hop")
    ap.add_argument("--metaqa-heldout", type=int, default=100, help="MetaQA dev held-out questions per hop")
    ap.add_argument("--webqsp-train", type=int, default=0, help="WebQSP train questions for training (600 tried)")
    ap.add_argument("--webqsp-heldout", type=int, default=0, help="other WebQSP train questions held out (200 tried)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hops", type=int, default=2, help="G_q's expansion depth when extracting the schema paths")
    ap.add_argument("--c", type=float, default=1.0, help="L2 strength of the linear ranker shown beside")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--grid", default="16x30,32x30,32x60,64x30,64x60,32x100",
                    help="hidden x epochs pairs the cross-validation chooses among")
    ap.add_argument("--no-select", action="store_true", help="fit with --hidden/--epochs, no cross-validation")
    ap.add_argument("--reuse", action="store_true", help="refit on the cached extraction (per store)")
    ap.add_argument("--no-write-model", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "path_ranker.json")
    args = ap.parse_args()

    name = "path_ranker" if args.hops == 2 else f"path_ranker_hops{args.hops}"
    items = cwq_dev() + metaqa_dev(args.metaqa_train, args.metaqa_heldout, args.seed)
    if args.webqsp_train or args.webqsp_heldout:
        items += webqsp_train(args.webqsp_train, args.webqsp_heldout, args.seed)
    lexicon = fit_lexicon({q.id for q, _, _ in items}, write=not args.no_write_model)
    rows = extract_cached(name, lambda store, items, part: extract(store, items, part, args.hops),
                          cwq_uri=os.environ.get("NEO4J_URI"), metaqa_uri=args.metaqa_uri,
                          n_train=args.metaqa_train, n_held=args.metaqa_heldout, seed=args.seed, reuse=args.reuse,
                          webqsp=(args.webqsp_train, args.webqsp_heldout))
    add_word_scores(rows, {q.id: q for q, _, _ in items}, lexicon)
    train = [r for r in rows if not r["heldout"]]
    held = [r for r in rows if r["heldout"]]
    groups, labels = groups_of(train)
    cv: dict[str, float] = {}
    if not args.no_select:
        grid = [tuple(int(v) for v in g.split("x")) for g in args.grid.split(",")]
        (args.hidden, args.epochs), cv = select(train, grid)
    prov = {"trained_by": "python bench/path_ranker.py", "hidden": args.hidden, "epochs": args.epochs,
            "selected_by": "two-fold cross-validation on the training questions" if cv else "given",
            "data": {"cwq-dev (WebQTrn bases)": sum(r["kind"] in ("composition", "conjunction", "comparative",
                                                                   "superlative") for r in train),
                     "metaqa-dev": sum(r["kind"].startswith("metaqa") for r in train),
                     "webqsp-train (gold relation paths)": sum(r["kind"] == "webqsp-train" for r in train)},
            "heldout": "CWQ dev on WebQTest-* bases; other MetaQA dev and WebQSP train questions"}
    ranker = train_path_ranker(groups, labels, hidden=args.hidden, epochs=args.epochs, provenance=prov)
    linear = fit_listwise(FEATURES, groups, labels, c=args.c)

    def ranked(p: dict) -> float:
        return ranker.score(p["parts"])

    def linear_ranked(p: dict) -> float:
        return linear.score(p["parts"])

    def handset(p: dict) -> float:
        return p["handset"]

    kinds = sorted({r["kind"] for r in rows})
    summary: dict[str, float] = {"heldout_top1_ranker": round(top1(held, ranked), 4),
                                 "heldout_top1_linear": round(top1(held, linear_ranked), 4),
                                 "heldout_top1_handset": round(top1(held, handset), 4),
                                 "train_top1_ranker": round(top1(train, ranked), 4),
                                 "train_top1_handset": round(top1(train, handset), 4),
                                 "heldout_questions": len(held), "train_questions": len(train)}
    by: dict[str, dict[str, float]] = defaultdict(dict)
    for k in kinds:
        sub = [r for r in held if r["kind"] == k]
        summary[f"heldout/{k}/top1_ranker"] = round(top1(sub, ranked), 4)
        summary[f"heldout/{k}/top1_linear"] = round(top1(sub, linear_ranked), 4)
        summary[f"heldout/{k}/top1_handset"] = round(top1(sub, handset), 4)
        by[k] = {"n": len(sub), "ceiling": round(float(np.mean([any(p["hit"] for p in r["paths"]) for r in sub])), 4)
                 if sub else None}
    if args.hops > 2:  # as G_q runs: the two-hop ranker below deeper_at, this one at or above it
        shallow, at = load_path_ranker(depth=2), ExpansionConfig().deeper_at
        for k in ["all"] + kinds:
            sub = [r for r in held if k == "all" or r["kind"] == k]
            summary[f"heldout_adaptive/{k}/top1"] = round(adaptive_top1(sub, shallow, ranker, at), 4)
            summary[f"heldout_two_hops/{k}/top1"] = round(adaptive_top1(sub, shallow, ranker, 2.0), 4)
    ranker.provenance["heldout_top1"] = summary["heldout_top1_ranker"]
    if not args.no_write_model:
        ranker.save(asset_path(args.hops))
        print(f"wrote {asset_path(args.hops)}")
    write_result(args.out, {"summary": summary, "heldout_sizes_and_ceilings": by, "cross_validation_top1": cv,
                            "linear_weights": dict(zip(linear.names, linear.weights.round(4).tolist())),
                            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
