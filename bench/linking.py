"""Fit and check the topic-linking scorer (:mod:`sgr.retrieval.mentions`) on dev questions; report WebQSP.

Each question is linked from its text alone (no given topic, MetaQA's brackets removed). Every (span, node) pair the
question names is a candidate, positive when the node is one of the gold topic entities. Training questions: CWQ dev
on WebQSP *train* bases, ``--metaqa-train`` MetaQA dev questions per hop and ``--webqsp-train`` WebQSP *train*
questions; held out: CWQ dev on WebQSP *test* bases, ``--metaqa-heldout`` other MetaQA dev questions per hop and the
``--webqsp-heldout`` other WebQSP train questions. A WebQSP train question has gold relation paths but no topic: its
topic is the candidate node its gold paths start from in the store, among the nodes a span names wholly
(:func:`path_topic`: not a part of the name, a near spelling or a demonym's place, not inside another whole name; with
those, a question whose topic is not in the store took a namesake's — "jennifer" → *Brody Jenner*), when exactly one
starts the most of them (the 31 that CWQ dev gives topics for keep those, and the derived topic is checked against
them). WebQSP test (a ``--webqsp-sample`` of it) is reported only, never trained or
tuned on. Stores: the WebQSP slice + CWQ dev (NEO4J_URI) and the MetaQA KB (``--metaqa-uri``).

    python bench/linking.py --metaqa-uri bolt://127.0.0.1:PORT
    python bench/linking.py --metaqa-uri … --reuse        # refit on the cached candidates

Writes ``sgr/assets/linker.json`` (unless ``--no-write-model``) and ``bench/results/linking.json`` (summary:
``linking/<set>/accuracy`` and ``all_topics_found`` for cwq-dev, cwq-dev-heldout, metaqa-dev-heldout, webqsp-train,
webqsp-train-heldout on the cached candidates, with the new scorer, the one before it (``--before``, ``_before``) and
none (``_unlearned``); end to end through the linker with the new scorer and the one before: WebQSP test and the 31
WebQSP train questions CWQ dev gives topics for, ``webqsp-train-bases``; with the new one: CWQ dev, its further
entities too: every gold topic linked, topic recall, linked precision, each ``…_end_to_end``).
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
from sgr.core.logistic import LogisticScorer, load_scorer  # noqa: E402
from sgr.datasets import load_dataset  # noqa: E402
from sgr.evaluation.linking import linking_accuracy  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.retrieval import mentions  # noqa: E402
from sgr.retrieval.entities import EntityLinker  # noqa: E402
from sgr.retrieval.relations import describe_retriever, sgr_retriever  # noqa: E402
from sgr.retrieval.supervision import clean_paths, path_starts, topic_from_paths  # noqa: E402


def candidates(store: GraphStore, items: Sequence[DevItem], label: str) -> list[dict]:
    """Each question's candidates with features and labels (the relation evidence from SGR's default retriever).

    A WebQSP train question (gold relation paths, no topics) keeps how many of its gold paths each candidate node
    starts (``starts``, :func:`sgr.retrieval.supervision.path_starts`); :func:`label_by_paths` labels it from them,
    unless CWQ dev gives its topics (:func:`dev_questions.webqsp_train_topics`, ``given``)."""
    retriever = sgr_retriever(store, None) or sgr_retriever(store, "cosine")
    webqsp = label.startswith("webqsp-train")
    known = {q.id: q.topic_entities for q in webqsp_train_topics()} if webqsp else {}
    gold_ids = EntityLinker(store).resolve({t for q, _, _ in items for t in q.topic_entities}
                                           | {t for ts in known.values() for t in ts})
    rows = []
    for n, (q, _kind, held) in enumerate(items, 1):
        topics = q.topic_entities or known.get(q.id, [])
        gold = {i for t in topics for i in gold_ids.get(t, [])}
        text = q.text.replace("[", "").replace("]", "")
        if n % 100 == 0:
            print(f"{label}: {n}/{len(items)}", flush=True)
        if not gold and not q.gold_paths:
            continue
        cands = mentions.mention_candidates(store, text)
        starts = path_starts(store, [c.id for c in cands], clean_paths(q.gold_paths, 10)) if q.gold_paths else {}
        if not gold and not starts:
            continue
        scores = {r.name: r.score for r in retriever.retrieve(text, 50)}
        mentions.featurize(text, cands, scores)
        row = {"id": q.id, "question": text, "set": "webqsp-train" if webqsp else label, "heldout": held,
               "given": bool(gold), "topics": [gold_ids[t] for t in dict.fromkeys(topics) if gold_ids.get(t)],
               "cands": [{"features": c.features, "hit": int(c.id in gold), "span": c.span, "id": c.id,
                          "start": c.start, "end": c.end}
                         for c in cands]}
        if starts:
            row["starts"] = starts
        rows.append(row)
    return rows


def path_topic(row: dict) -> str | None:
    """The topic a WebQSP train question's gold paths give (:func:`topic_from_paths`): among the nodes a span names
    wholly — not a part of the name, a near spelling or a demonym's place ("english" → *England*: the language is
    only a part of *English Language*'s name), and not inside another wholly named span ("alabama" in "the
    university of alabama") — the one that starts the most of the gold paths."""
    whole = {c["id"] for c in row["cands"] if c["features"]["match"] == 1.0 and c["features"]["coverage"] == 1.0
             and not c["features"]["demonym"] and not c["features"]["inside_named"]}
    return topic_from_paths({i: n for i, n in row.get("starts", {}).items() if i in whole})


def label_by_paths(row: dict) -> bool:
    """Label a WebQSP train question's candidates by :func:`path_topic` unless CWQ dev gives its topics (then the
    derived one is kept as ``derived``, to check the rule); False when it has no topic (left out)."""
    if row["set"] != "webqsp-train":
        return True
    derived = path_topic(row)
    if row["given"]:
        row["derived"] = derived
        return True
    if derived is None:
        return False
    row["topics"] = [[derived]]
    for c in row["cands"]:
        c["hit"] = int(c["id"] == derived)
    return True


def top1(rows: list[dict], scorer: mentions.LinkScorer | None) -> float:
    """Share of questions whose best-scored candidate is a gold topic (``scorer`` None: the unlearned fallback)."""
    def score(f: dict) -> float:
        return scorer.score(f) if scorer is not None else mentions.fallback_score(f)

    hits = [max(r["cands"], key=lambda c: score(c["features"]))["hit"] == 1 for r in rows if r["cands"]]
    hits += [False] * sum(1 for r in rows if not r["cands"])
    return round(sum(hits) / len(hits), 4) if hits else float("nan")


def all_found(rows: list[dict], scorer: mentions.LinkScorer) -> float:
    """Share of questions whose linked entities (the topic and the further ones, :func:`mentions.choose` over the
    cached candidates) hold every gold topic."""
    found = 0
    for r in rows:
        ranked = mentions.best_first([mentions.MentionCandidate(c["span"], c["start"], c["end"], c["id"], None,
                                                                c["features"]["match"], "",
                                                                score=scorer.score(c["features"]))
                                      for c in r["cands"]])
        ids = {c.id for c in mentions.choose(ranked)}
        found += all(ids & set(t) for t in r["topics"])
    return round(found / len(rows), 4) if rows else float("nan")


def dev_misses(rows: list[dict], scorer: mentions.LinkScorer, limit: int = 150) -> list[dict]:
    """The questions of ``rows`` whose best-scored candidate is not a gold topic: the gold, and the best three."""
    out = []
    for r in rows:
        ranked = sorted(r["cands"], key=lambda c: -scorer.score(c["features"]))
        if ranked and ranked[0]["hit"] != 1 and len(out) < limit:
            out.append({"id": r["id"], "question": r.get("question"), "gold": r["topics"],
                        "best": [(c["span"], c["id"], round(scorer.score(c["features"]), 3)) for c in ranked[:3]]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--metaqa-uri", required=True)
    ap.add_argument("--metaqa-train", type=int, default=200)
    ap.add_argument("--metaqa-heldout", type=int, default=100)
    ap.add_argument("--webqsp-train", type=int, default=0,
                    help="WebQSP train questions to fit on (of 2,715; 0: none, see bench/experiments/linking.md)")
    ap.add_argument("--webqsp-heldout", type=int, default=2715, help="other WebQSP train questions, measured only")
    ap.add_argument("--webqsp-sample", type=int, default=500, help="WebQSP test questions, report only")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--before", type=Path, default=mentions.asset_path(),
                    help="the scorer to compare with (default: the shipped one, read before this run replaces it)")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--no-write-model", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "linking.json")
    args = ap.parse_args()
    before = LogisticScorer.from_dict(json.loads(args.before.read_text())) if args.before.is_file() else None

    rows = extract_cached("linking", candidates, cwq_uri=os.environ.get("NEO4J_URI"), metaqa_uri=args.metaqa_uri,
                          n_train=args.metaqa_train, n_held=args.metaqa_heldout, seed=args.seed, reuse=args.reuse,
                          webqsp=(args.webqsp_train, args.webqsp_heldout))
    rows = [r for r in rows if label_by_paths(r)]
    train = [r for r in rows if not r["heldout"] and r["cands"]]
    scorer = mentions.train_link_scorer(
        [[c["features"] for c in r["cands"]] for r in train], [[c["hit"] for c in r["cands"]] for r in train],
        c=args.c, provenance={
            "trained_by": "python bench/linking.py", "c": args.c,
            "data": {"cwq-dev (WebQTrn bases)": sum(r["set"] == "cwq-dev" for r in train),
                     "metaqa-dev": sum(r["set"] == "metaqa-dev" for r in train),
                     "webqsp-train (topic from the gold paths)": sum(r["set"] == "webqsp-train" for r in train)},
            "heldout": "CWQ dev on WebQTest-* bases; other MetaQA dev questions; other WebQSP train questions"})
    sets = {"cwq-dev": [r for r in rows if r["set"] == "cwq-dev"],
            "cwq-dev-heldout": [r for r in rows if r["set"] == "cwq-dev" and r["heldout"]],
            "metaqa-dev-heldout": [r for r in rows if r["set"] == "metaqa-dev" and r["heldout"]],
            "webqsp-train": [r for r in rows if r["set"] == "webqsp-train"],
            "webqsp-train-heldout": [r for r in rows if r["set"] == "webqsp-train" and r["heldout"]]}
    summary: dict[str, float] = {}
    for name, sub in sets.items():
        summary[f"linking/{name}/accuracy"] = top1(sub, scorer)
        summary[f"linking/{name}/all_topics_found"] = all_found(sub, scorer)
        if before is not None:
            summary[f"linking/{name}/accuracy_before"] = top1(sub, before)
            summary[f"linking/{name}/all_topics_found_before"] = all_found(sub, before)
        summary[f"linking/{name}/accuracy_unlearned"] = top1(sub, None)
        summary[f"linking/{name}/questions"] = len(sub)
    checked = [r for r in sets["webqsp-train"] if r.get("derived")]  # topics from CWQ dev and from the gold paths
    summary["linking/webqsp-train/derived_topic_agrees"] = round(
        sum(any(r["derived"] in t for t in r["topics"]) for r in checked) / len(checked), 4) if checked else None
    summary["linking/webqsp-train/derived_topic_checked"] = len(checked)
    if not args.no_write_model:
        scorer.save(mentions.asset_path())
        load_scorer.cache_clear()
        print(f"wrote {mentions.asset_path()}")
    misses: dict[str, list] = {}
    if args.webqsp_sample:  # report only: end to end through the linker, the new scorer and the one before
        qs = load_dataset("webqsp", sample=args.webqsp_sample, seed=args.seed).questions
        cwq = [q for q, _, _ in cwq_dev()]
        with GraphStore.from_settings() as store:
            retriever = sgr_retriever(store, None) or sgr_retriever(store, "cosine")
            summary["retriever"] = describe_retriever(retriever)
            for tag, s in (("", scorer), ("_before", before)):
                if s is None:
                    continue
                res = linking_accuracy(store, qs, retriever, max_misses=0, scorer=s)
                wtrain = linking_accuracy(store, webqsp_train_topics(), retriever, scorer=s)
                summary[f"linking/webqsp/accuracy{tag}"] = round(res.accuracy, 4)
                summary["linking/webqsp/questions"] = res.questions
                summary[f"linking/webqsp-train-bases/accuracy{tag}"] = round(wtrain.accuracy, 4)
                summary["linking/webqsp-train-bases/questions"] = wtrain.questions
                if tag:  # CWQ dev end to end with the new scorer only (the one before: on the cached candidates)
                    continue
                cwq_res = linking_accuracy(store, cwq, retriever, scorer=s)
                summary["linking/cwq-dev/accuracy_end_to_end"] = round(cwq_res.accuracy, 4)
                for key in ("all_topics_found", "all_topics_found_multi", "multi_topic_questions", "topic_recall",
                            "linked_precision"):
                    summary[f"linking/cwq-dev/{key}_end_to_end"] = cwq_res.summary()[key]
                misses = {"cwq_dev_misses": cwq_res.misses, "webqsp_train_misses": wtrain.misses}
    misses["webqsp_train_heldout_misses"] = dev_misses(sets["webqsp-train-heldout"], scorer)
    weights = dict(zip(mentions.FEATURES, scorer.weights.round(4).tolist()))
    write_result(args.out, {"summary": summary, "weights": weights,
                            **misses,
                            "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
