"""The same questions answered by ``sgr-compiled`` of two code trees in one run: did this round lower any figure?

Each tree (``--before``: a checkout of the earlier commit; ``--after``: this one, the default) answers, in a process
of its own (``PYTHONPATH`` = the tree), MetaQA test (``--metaqa`` per hop, seed 0) at ``hops`` = the question's hop
count and at the default 2, the WebQSP test sample (``--webqsp``, seed 0) and all 1,180 CWQ dev questions at hops 2,
against the same stores
(``--metaqa-uri``; ``--webqsp-uri`` holds the WebQSP slice and the CWQ dev graph). Answers stream to
``$SGR_HOME/cache/bench/before_after_<tree>.jsonl`` (rerunning resumes). ``sgr-compiled`` needs no model, so a
difference is the code's.

    python bench/before_after.py --before ../sgr-at-fa252ed --metaqa-uri bolt://… --webqsp-uri bolt://…

Writes ``bench/results/before_after.json``: summary ``<dataset>@<hops>/before``, ``…/after``, ``…/gained``,
``…/lost``, ``…/questions`` (strict Hits@1 on the questions both trees answered), and per CWQ question type
``cwq-dev@2/<type>/before|after|questions``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from record import RESULTS, write_result  # noqa: E402

if "--worker" in sys.argv:  # a worker imports the sgr package of its own tree (PYTHONPATH), not bench/sgr.py
    sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
else:
    sys.path.insert(0, str(ROOT))


def jobs(metaqa: int, webqsp: int, metaqa_uri: str, webqsp_uri: str,
         cwq: str) -> list[tuple[str, str, int | None, int]]:
    """(dataset, store, sample, hops) in the order they run; CWQ dev by its path ``cwq`` (an earlier tree may not
    know the dataset's name)."""
    out = [(f"metaqa-{k}hop", metaqa_uri, metaqa, h) for k in (1, 2, 3) for h in dict.fromkeys((k, 2))]
    return out + [("webqsp", webqsp_uri, webqsp, 2), (cwq, webqsp_uri, None, 2)]


def answer(out: Path, todo: list[tuple[str, str, int | None, int]]) -> None:
    """The worker: run inside one tree (its ``sgr`` on the path), append {ds, hops, id, h} lines to ``out``."""
    from sgr.datasets import load_dataset
    from sgr.evaluation.metrics.hits1_strict import hits1_strict
    from sgr.graph.store import GraphStore
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method

    done = {(r["ds"], r["hops"], r["id"]) for r in map(json.loads, out.open())} if out.is_file() else set()
    with out.open("a") as fh:
        for ds, uri, n, hops in todo:
            data = load_dataset(ds, sample=n, seed=0)
            with GraphStore(uri) as store:
                method = create_method("sgr-compiled", MethodContext(store=store, options={"hops": hops}))
                for q in data.questions:
                    if (ds, hops, q.id) in done or not q.answers:
                        continue
                    try:
                        h = hits1_strict(method.answer(q).answer_texts, q.answers)
                    except Exception:  # noqa: BLE001 — an error is a miss, in either tree
                        h = 0.0
                    fh.write(json.dumps({"ds": ds, "hops": hops, "id": q.id, "h": h}) + "\n")
                    fh.flush()


def read(path: Path) -> dict[tuple[str, int], dict[str, float]]:
    got: dict[tuple[str, int], dict[str, float]] = {}
    for r in map(json.loads, path.open()):
        got.setdefault((r["ds"], r["hops"]), {})[r["id"]] = r["h"]
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the earlier commit")
    ap.add_argument("--after", type=Path, default=ROOT)
    ap.add_argument("--metaqa-uri", required=True)
    ap.add_argument("--webqsp-uri", required=True)
    ap.add_argument("--metaqa", type=int, default=100)
    ap.add_argument("--webqsp", type=int, default=500)
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cwq-file", help=argparse.SUPPRESS)  # the worker's: CWQ dev as this tree found it
    ap.add_argument("--out", type=Path, default=RESULTS / "before_after.json")
    args = ap.parse_args()
    if args.worker:
        answer(args.worker, jobs(args.metaqa, args.webqsp, args.metaqa_uri, args.webqsp_uri, args.cwq_file))
        return
    from sgr.core.config import cache_dir, shared_data_dir

    cwq_file = str(shared_data_dir() / "cwq" / "cwq_dev.jsonl")

    files, commits = {}, {}
    for tree in ("before", "after"):
        root = getattr(args, tree).resolve()
        files[tree] = cache_dir("bench") / f"before_after_{tree}.jsonl"
        commits[tree] = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                                       capture_output=True, text=True).stdout.strip()
        cmd = [sys.executable, str(Path(__file__).resolve()), "--before", str(args.before), "--metaqa-uri",
               args.metaqa_uri, "--webqsp-uri", args.webqsp_uri, "--metaqa", str(args.metaqa), "--webqsp",
               str(args.webqsp), "--worker", str(files[tree]), "--cwq-file", cwq_file]
        subprocess.run(cmd, check=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    before, after = read(files["before"]), read(files["after"])
    summary: dict[str, float] = {}
    for key in before:
        ids = sorted(set(before[key]) & set(after.get(key, {})))
        label = f"{'cwq-dev' if key[0] == cwq_file else key[0]}@{key[1]}"
        b, a = before[key], after[key]
        summary |= {f"{label}/before": round(sum(b[i] for i in ids) / max(1, len(ids)), 4),
                    f"{label}/after": round(sum(a[i] for i in ids) / max(1, len(ids)), 4),
                    f"{label}/gained": sum(a[i] > b[i] for i in ids), f"{label}/lost": sum(a[i] < b[i] for i in ids),
                    f"{label}/questions": len(ids)}
    kinds = {r["id"]: r["type"] for r in map(json.loads, open(cwq_file, encoding="utf-8"))}
    cwq = (cwq_file, 2)
    for kind in sorted(set(kinds.values())):  # CWQ dev per question type
        ids = [i for i in before.get(cwq, {}) if kinds.get(i) == kind and i in after.get(cwq, {})]
        for tree, got in (("before", before), ("after", after)):
            summary[f"cwq-dev@2/{kind}/{tree}"] = round(sum(got[cwq][i] for i in ids) / max(1, len(ids)), 4)
        summary[f"cwq-dev@2/{kind}/questions"] = len(ids)
    write_result(args.out, {"summary": summary, "method": "sgr-compiled", "commits": commits,
                            "config": {"metaqa": args.metaqa, "webqsp": args.webqsp, "seed": 0}})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
