"""Benchmark: the local server's prompt cache, side by side, on full SGR questions.

Two llama.cpp servers with the packaged base model run at once, one started with the RAM prompt cache
(:data:`sgr.llm.server.PROMPT_CACHE_BYTES`, what ``sgr llm serve`` does) and one without. The same WebQSP questions
(fixed-seed sample of the slice, gold topic entities given) are answered by ``sgr`` through each, alternating which
server goes first per question; sgr's own LLM call cache is off, so every call reaches a server. Per question it
records the LLM seconds and the whole answer time; it also checks that both servers gave the same answers.

    NEO4J_URI=bolt://… .venv/bin/python bench/prompt_cache.py [--n 30] [--seed 1] [--warmup 2]

Writes ``bench/results/prompt_cache.json`` (``summary``: ``llm_seconds_median_cache``, ``llm_seconds_median_nocache``,
``llm_seconds_ratio``, ``answer_seconds_median_cache``, ``answer_seconds_median_nocache``, ``same_answers``, ``n``)
and prints a table. The first ``--warmup`` questions fill the cache and are not counted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import finished_config, write_result  # noqa: E402
from sgr.api import ask  # noqa: E402
from sgr.datasets import load_dataset  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.llm import server  # noqa: E402
from sgr.llm.client import LLM  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=30, help="questions counted")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--out", type=Path, default=RESULTS / "prompt_cache.json")
    args = ap.parse_args(argv)

    store = GraphStore.from_settings()
    store.verify()
    questions = load_dataset("webqsp", sample=args.n + args.warmup, seed=args.seed).questions
    tmp = Path(tempfile.mkdtemp(prefix="sgr-prompt-cache-"))
    procs, llms = [], {}
    try:
        for label, flag in (("cache", True), ("nocache", False)):
            proc, info = server.launch(log=tmp / f"{label}.log", prompt_cache=flag)
            procs.append(proc)
            llms[label] = LLM.from_endpoint(info.base_url, info.model, cache_dir=None, dialect="llamacpp")
        rows = []
        for i, q in enumerate(questions):
            order = ("cache", "nocache") if i % 2 == 0 else ("nocache", "cache")
            row: dict[str, Any] = {"id": q.id, "question": q.text, "warmup": i < args.warmup}
            for label in order:
                res = ask(q.text, store=store, topics=q.topic_entities, method="sgr", llm=llms[label], evidence=False)
                usage = res.prediction.usage
                row[label] = {"llm_seconds": round(usage.llm_seconds, 3), "answer_seconds": round(usage.total_seconds, 3),
                              "llm_calls": usage.llm_calls, "answers": res.answers[:5]}
            rows.append(row)
            print(f"[prompt-cache] {i + 1}/{len(questions)} cache {row['cache']['llm_seconds']:.1f} s, "
                  f"no cache {row['nocache']['llm_seconds']:.1f} s  {q.text}", flush=True)
    finally:
        for proc in procs:
            proc.terminate()
        store.close()

    counted = [r for r in rows if not r["warmup"]]

    def med(label: str, key: str) -> float:
        return round(statistics.median(r[label][key] for r in counted), 3)

    summary = {"n": len(counted),
               "llm_seconds_median_cache": med("cache", "llm_seconds"),
               "llm_seconds_median_nocache": med("nocache", "llm_seconds"),
               "answer_seconds_median_cache": med("cache", "answer_seconds"),
               "answer_seconds_median_nocache": med("nocache", "answer_seconds"),
               "same_answers": round(sum(r["cache"]["answers"] == r["nocache"]["answers"] for r in counted)
                                     / max(1, len(counted)), 4)}
    summary["llm_seconds_ratio"] = round(summary["llm_seconds_median_cache"]
                                         / max(1e-9, summary["llm_seconds_median_nocache"]), 3)
    result = {"summary": summary,
              "config": {"n": args.n, "seed": args.seed, "warmup": args.warmup, "method": "sgr (base model)",
                         "cache_bytes": server.PROMPT_CACHE_BYTES, "threads_per_server": server.default_threads(),
                         **finished_config()},
              "questions": rows}
    write_result(args.out, result)
    print("| figure | prompt cache | no cache |\n|---|---|---|")
    print(f"| LLM seconds per question (median, n={summary['n']}) | {summary['llm_seconds_median_cache']} | "
          f"{summary['llm_seconds_median_nocache']} |")
    print(f"| answer seconds per question (median) | {summary['answer_seconds_median_cache']} | "
          f"{summary['answer_seconds_median_nocache']} |")
    print(f"ratio {summary['llm_seconds_ratio']}, same answers {summary['same_answers']:.0%}")
    return result


if __name__ == "__main__":
    main()
