"""Fit the answer-type table (:mod:`sgr.retrieval.answer_types`) on WebQSP *train* gold paths, check it, ship it.

Each training question pairs its asked key with the role words of the last relation of its gold paths (noise
relations such as ``people.person.gender`` left out, :data:`sgr.core.lexicon.NOISE_RELATIONS`). The check: fitted on
the questions of one half (split by id, seed 0), how well the match of a held-out question's own gold last relation
ranks above the match of another held-out question's (AUROC; 0.5 = the table says nothing), then the table is refitted
on all of them and written to ``sgr/assets/answer_types.json``.

    python bench/answer_types.py                     # check, write the table and bench/results/answer_types.json
    python bench/answer_types.py --no-write-model    # check only
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from record import RESULTS, write_result  # noqa: E402
from sgr.core.lexicon import NOISE_RELATIONS  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.evaluation.metrics.calibration import auroc  # noqa: E402
from sgr.retrieval.answer_types import asset_path, fit_answer_types  # noqa: E402


def examples(path: Path) -> list[tuple[str, list[str]]]:
    """(question, the distinct last relations of its gold paths, noise left out) of each training question."""
    out = []
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        lasts = sorted({p[-1] for p in r.get("ground_paths") or [] if p and p[-1] not in NOISE_RELATIONS})
        if lasts:
            out.append((r["question"], lasts))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-write-model", action="store_true")
    ap.add_argument("--out", type=Path, default=RESULTS / "answer_types.json")
    args = ap.parse_args()
    src = shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl"
    data = examples(src)
    order = list(range(len(data)))
    random.Random(0).shuffle(order)
    fit_on, held = [data[i] for i in order[::2]], [data[i] for i in order[1::2]]
    table = fit_answer_types(fit_on)
    rng = random.Random(1)
    pairs = []
    for q, lasts in held:
        other = rng.choice([o for o in held if set(o[1]).isdisjoint(lasts)])[1]
        pairs.append((max(table.match(q, r) for r in lasts), 1))
        pairs.append((max(table.match(q, r) for r in other), 0))
    summary = {"training_questions": len(data), "heldout_questions": len(held),
               "heldout_auroc": round(auroc(pairs), 4)}
    final = fit_answer_types(data, provenance={"fitted_by": "python bench/answer_types.py",
                                               "data": {"webqsp-train-paths": len(data)}})
    summary["keys"] = len(final.keys)
    summary["role_words"] = len(final.words)
    if not args.no_write_model:
        asset_path().write_text(json.dumps(final.to_dict(), indent=None, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {asset_path()}")
    write_result(args.out, {"summary": summary, "config": {"source": str(src)}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
