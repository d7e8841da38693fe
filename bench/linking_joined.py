"""A conjunction's further entities with and without the graph's join to the topic (:func:`sgr.retrieval.mentions.
topic_hops`, :data:`~sgr.retrieval.mentions.JOINED_MIN_SCORE`), end to end through the shipped linker, side by side in
one run.

Sets: CWQ dev on WebQSP *train* bases (where the thresholds were chosen), CWQ dev on WebQSP *test* bases (held out)
and the 31 WebQSP train questions CWQ dev gives topics for (everyday phrasing). Store: the WebQSP slice + CWQ dev
(``NEO4J_URI``).

    python bench/linking_joined.py

Writes ``bench/results/linking_joined.json`` (summary: ``<set>/<measure>`` and ``<set>/<measure>_unjoined`` for
every measure of :meth:`sgr.evaluation.linking.LinkingResult.summary`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dev_questions import cwq_dev, webqsp_train_topics  # noqa: E402
from record import RESULTS, write_result  # noqa: E402
from sgr.evaluation.linking import linking_accuracy  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.retrieval import mentions  # noqa: E402
from sgr.retrieval.relations import describe_retriever, sgr_retriever  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=RESULTS / "linking_joined.json")
    args = ap.parse_args()
    items = cwq_dev()
    sets = {"cwq-dev-train": [q for q, _, held in items if not held],
            "cwq-dev-heldout": [q for q, _, held in items if held],
            "webqsp-train-bases": webqsp_train_topics()}
    summary: dict[str, object] = {}
    with GraphStore.from_settings() as store:
        retriever = sgr_retriever(store, None) or sgr_retriever(store, "cosine")
        summary["retriever"] = describe_retriever(retriever)
        for name, questions in sets.items():
            for tag, joined in (("", mentions.JOINED_MIN_SCORE), ("_unjoined", {})):
                with mock.patch.object(mentions, "JOINED_MIN_SCORE", joined):
                    res = linking_accuracy(store, questions, retriever)
                for key, value in res.summary().items():
                    summary[f"{name}/{key}{tag}"] = value
                print(name, tag or "joined", res.summary(), flush=True)
    write_result(args.out, {"summary": summary, "config": {"joined_min_score": mentions.JOINED_MIN_SCORE,
                                                           "further_min_score": mentions.FURTHER_MIN_SCORE}})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
