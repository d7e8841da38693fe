"""Benchmark of ``sgr llm tune``: what the tuning run cost and what the tuned model gives, written to
``bench/results/tune_cpu.json`` or ``tune_gpu.json`` (by where the run trained; ``--out`` for another file), one run
per file, with its provenance (``bench/record.py``).

Figures (``summary`` keys added):

* ``tune_seconds_cpu`` (or ``tune_seconds_gpu`` when the run used CUDA): wall seconds of the tuning itself (the
  frozen-layer cache and the epochs, validation losses included), from the provenance file next to the weights,
  whose figures go to the section ``run``;
* ``tuned_path_accuracy`` / ``base_path_accuracy``: share of held-back validation questions whose first generated
  relation path equals the gold first path (greedy, unconstrained, the tuned vs the packaged weights), with
  ``tuned_validation_questions``; ``tuned_validation_loss`` / ``base_validation_loss``: target-token cross-entropy;
* ``tuned_tokens_per_s``: decode speed of the exported GGUF in the llama.cpp server (median of 3 uncached
  128-token generations, as ``bench/llm.py`` measures ``tokens_per_s``), and ``base_tokens_per_s_same_run``
  measured the same way right after, so the two are comparable on a shared machine.

Run (after ``sgr llm tune``)::

    SGR_HOME=… .venv/bin/python bench/tune.py [--weights PATH/model.gguf]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from bench.record import write_result  # noqa: E402

RESULTS = ROOT / "results"


def decode_speed(model: str) -> float:
    """tokens/s of ``model`` (base, tuned or a path) in a fresh llama.cpp server (one thread, as sgr serves)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_llm", ROOT / "llm.py")  # the one decode-speed measurement
    bench_llm = importlib.util.module_from_spec(spec)
    sys.modules["bench_llm"] = bench_llm
    spec.loader.exec_module(bench_llm)  # type: ignore[union-attr]
    from sgr.llm import server
    from sgr.llm.client import LLM

    with tempfile.TemporaryDirectory() as tmp:
        proc, info = server.launch(log=Path(tmp) / "server.log", model=model)
        try:
            llm = LLM.from_endpoint(info.base_url, info.model, cache_dir=None, dialect="llamacpp")
            return float(bench_llm.measure_decode_speed(llm)["tokens_per_s"])
        finally:
            server.terminate(proc.pid)


def device_kind(prov: dict[str, Any]) -> str:
    """``gpu`` or ``cpu``: where the run trained (its provenance says ``cuda (<GPU name>)`` for a GPU)."""
    return "gpu" if str(prov.get("device", "")).startswith("cuda") else "cpu"


def summarise(prov: dict[str, Any], tuned_tps: float | None, base_tps: float | None) -> dict[str, Any]:
    val = prov["validation"]
    out = {f"tune_seconds_{device_kind(prov)}": round(prov["seconds"]["tune"], 1),
           "tuned_path_accuracy": round(val["path_accuracy_tuned"]["exact"], 3),
           "base_path_accuracy": round(val["path_accuracy_base"]["exact"], 3),
           "tuned_validation_questions": val["path_accuracy_tuned"]["n"],
           "tuned_validation_loss": round(val["best_loss"], 4),
           "base_validation_loss": round(val["loss_before"], 4),
           "tuned_train_examples": prov["data"]["train"]}
    if tuned_tps is not None:
        out["tuned_tokens_per_s"] = tuned_tps
    if base_tps is not None:
        out["base_tokens_per_s_same_run"] = base_tps
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", type=Path, help="the tuned GGUF (default: sgr llm serve --model tuned's choice)")
    ap.add_argument("--no-speed", action="store_true", help="skip the server speed measurement")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default bench/results/tune_cpu.json or tune_gpu.json, by the run's device)")
    args = ap.parse_args()
    from sgr.llm import server

    weights = args.weights or server.tuned_model_path()
    prov = json.loads(weights.with_suffix(".json").read_text())
    tuned_tps = base_tps = None
    if not args.no_speed:
        tuned_tps = decode_speed(str(weights))
        base_tps = decode_speed("base")
    summary = summarise(prov, tuned_tps, base_tps)
    keep = ("weights", "graph_version", "device", "data", "config", "steps", "epochs_run", "stopped_early",
            "validation", "seconds", "examples", "train_tokens_per_s", "trained_by_bundle")
    out = args.out or RESULTS / f"tune_{device_kind(prov)}.json"
    write_result(out, {"summary": summary, "run": {k: prov[k] for k in keep if k in prov}})
    width = max(len(k) for k in summary)
    print(f"{'figure':<{width}}  value")
    for k, v in summary.items():
        print(f"{k:<{width}}  {v}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
