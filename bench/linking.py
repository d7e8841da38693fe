"""Fit and check the topic-linking scorer (:mod:`sgr.retrieval.mentions`) on dev questions; report WebQSP.

Each question is linked from its text alone (no given topic, MetaQA's brackets removed). Every (span, node) pair the
question names is a candidate, positive when the node is one of the gold topic entities. Training questions: CWQ dev
on WebQSP *train* bases and ``--metaqa-train`` MetaQA dev questions per hop; held out: CWQ dev on WebQSP *test* bases
and ``--metaqa-heldout`` other MetaQA dev questions per hop. WebQSP test (a ``--webqsp-sample`` of it) is reported
only, never trained or tuned on. Stores: the WebQSP slice + CWQ dev (NEO4J_URI) and the MetaQA KB (``--metaqa-uri``).

    python bench/linking.py --metaqa-uri bolt://127.0.0.1:PORT
    python bench/linking.py --metaqa-uri … --reuse        # refit on the cached candidates

Writes ``sgr/assets/linker.json`` (unless ``--no-write-model``) and ``bench/results/linking.json`` (summary:
``linking/<set>/accuracy`` for cwq-dev, cwq-dev-heldout, metaqa-dev-heldout, webqsp; with the shipped scorer and
without one, side by side; end to end through the linker, CWQ dev's further entities — every gold topic linked,
topic recall, linked precision — and the WebQSP train questions CWQ dev builds on, ``webqsp-train-bases``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev_questions import DevItem, cwq_dev, extract_cached, webqsp_train_topics  # noqa: E402
from record import RESULTS, write_result  # noqa: E402
from sgr.core.logistic import load_scorer  # noqa: E402
from sgr.datasets import load_dataset  # noqa: E402
from sgr.evaluation.linking import linking_accuracy  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.retrieval import mentions  # noqa: E402
from sgr.retrieval.entities import EntityLinker  # noqa: E402
from sgr.retrieval.relations import sgr_retriever  # noqa: E402


def candidates(store: GraphStore, items: Sequence[DevItem], label: str) -> list[dict]:
    """Each question's candidates with features and labels (the relation evidence from SGR's default retriever)."""
    retriever = sgr_retriever(store, None) or sgr_retriever(store, "cosine")
    gold_ids = EntityLinker(store).resolve({t for q, _, _ in items for t in q.topic_entities})
    rows = []
    for n, (q, _kind, held) in enumerate(items, 1):
        gold = {i for t in q.topic_entities for i in gold_ids.get(t, [])}
        text = q.text.replace("[", "").replace("]", "")
        if not gold:
            continue
        scores = {r.name: r.score for r in retriever.retrieve(text, 50)}
        cands = mentions.mention_candidates(store, text)
        mentions.featurize(text, cands, scores)
        rows.append({"id": q.id, "set": label, "heldout": held,
                     "topics": [gold_ids[t] for t in dict.fromkeys(q.topic_entities) if gold_ids.get(t)],
                     "cands": [{"features": c.features, "hit": int(c.id in gold), "span": c.span, "id": c.id,
                                "start": c.start, "end": c.end}
                               for c in cands]})
        if n % 100 == 0:
            print(f"{label}: {n}/{len(items)}", flush=True)
    return rows


def top1(rows: list[dict], scorer: mentions.LinkScorer | None) -> float:
    """Share of questions whose best-scored candidate is a gold topic (``scorer`` None: the unlearned fallback)."""
    def score(f: dict) -> float:
        return scorer.score(f) if scorer is not None else mentions.fallback_score(f)

    hits = [max(r["cands"], key=lambda c: score(c["features"]))["hit"] == 1 for r in rows if r["cands"]]
    hits += [False] * sum(1 for r in rows if not r["cands"])
    return round(sum(hits) / len(hits), 4) if hits else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--metaqa-uri", required=True)
    ap.add_argument("--metaqa-train", type=int, default=200)
    ap.add_argument("--metaqa-heldout", type=int, default=100)
    ap.add_argument("--webqsp-sample", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--no-write-model", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "linking.json")
    args = ap.parse_args()

    rows = extract_cached("linking", candidates, cwq_uri=os.environ.get("NEO4J_URI"), metaqa_uri=args.metaqa_uri,
                          n_train=args.metaqa_train, n_held=args.metaqa_heldout, seed=args.seed, reuse=args.reuse)
    train = [r for r in rows if not r["heldout"] and r["cands"]]
    scorer = mentions.train_link_scorer(
        [[c["features"] for c in r["cands"]] for r in train], [[c["hit"] for c in r["cands"]] for r in train],
        c=args.c, provenance={
            "trained_by": "python bench/linking.py", "c": args.c,
            "data": {"cwq-dev (WebQTrn bases)": sum(r["set"] == "cwq-dev" for r in train),
                     "metaqa-dev": sum(r["set"] == "metaqa-dev" for r in train)},
            "heldout": "CWQ dev on WebQTest-* bases; other MetaQA dev questions"})
    sets = {"cwq-dev": [r for r in rows if r["set"] == "cwq-dev"],
            "cwq-dev-heldout": [r for r in rows if r["set"] == "cwq-dev" and r["heldout"]],
            "metaqa-dev-heldout": [r for r in rows if r["set"] == "metaqa-dev" and r["heldout"]]}
    summary: dict[str, float] = {}
    for name, sub in sets.items():
        summary[f"linking/{name}/accuracy"] = top1(sub, scorer)
        summary[f"linking/{name}/accuracy_unlearned"] = top1(sub, None)
        summary[f"linking/{name}/questions"] = len(sub)
    if not args.no_write_model:
        scorer.save(mentions.asset_path())
        load_scorer.cache_clear()
        print(f"wrote {mentions.asset_path()}")
    misses: dict[str, list] = {}
    if args.webqsp_sample:  # report only: the shipped scorer, end to end through the linker
        qs = load_dataset("webqsp", sample=args.webqsp_sample, seed=args.seed).questions
        with GraphStore.from_settings() as store:
            retriever = sgr_retriever(store, None) or sgr_retriever(store, "cosine")
            res = linking_accuracy(store, qs, retriever, max_misses=0)
            cwq_res = linking_accuracy(store, [q for q, _, _ in cwq_dev()], retriever)
            wtrain = linking_accuracy(store, webqsp_train_topics(), retriever)
        summary["linking/webqsp/accuracy"] = round(res.accuracy, 4)
        summary["linking/webqsp/questions"] = res.questions
        summary["linking/cwq-dev/accuracy_end_to_end"] = round(cwq_res.accuracy, 4)
        for key in ("all_topics_found", "all_topics_found_multi", "multi_topic_questions", "topic_recall",
                    "linked_precision"):
            summary[f"linking/cwq-dev/{key}"] = cwq_res.summary()[key]
        summary["linking/webqsp-train-bases/accuracy"] = round(wtrain.accuracy, 4)
        summary["linking/webqsp-train-bases/questions"] = wtrain.questions
        misses = {"cwq_dev_misses": cwq_res.misses, "webqsp_train_misses": wtrain.misses}
    weights = dict(zip(mentions.FEATURES, scorer.weights.round(4).tolist()))
    write_result(args.out, {"summary": summary, "weights": weights,
                            **misses,
                            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
