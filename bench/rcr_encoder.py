"""RCR lever: the sentence encoder itself fine-tuned for relation retrieval (``sgr relations train --method encoder``).

    .venv/bin/python bench/rcr_encoder.py [--epochs 10] [--lr 5e-5] [--state DIR]

The paper's retriever (RCR §4.1.1) keeps its encoder frozen and trains two heads; here the whole all-MiniLM-L6-v2
bi-encoder is trained end to end by :func:`sgr.retrieval.encoder_training.train_encoder` (the loss and the negatives
are in that module's docstring) on WebQSP train questions (10 % held out, seed 0 — the split of ``sgr relations
train``), and RRA@k is measured on the WebQSP slice's ``ground_paths`` (1,552 test questions) over the same
1,166-relation vocabulary ``bench/rcr.py`` ranks (the slice's relations plus the MetaQA KB's, read from the data
files, so no Neo4j is needed), by the retriever the product serves
(:class:`sgr.retrieval.relations.FineTunedRelationRetriever` over the saved folder). The epoch with the best
validation RRA@50 is kept; test is never used for selection. One torch thread. Resumable: the state is kept under
``--state`` (default ``$SGR_HOME/bench/rcr_encoder``) after every epoch. Writes ``bench/results/rcr_encoder.json``
(``summary``: ``webqsp/rra@K`` of the selected epoch, ``webqsp/rra@K_cosine``, ``best_epoch``, ``epochs_run``,
``median_epoch_seconds``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from sgr.core.config import sgr_home  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.retrieval import encoder_bundle  # noqa: E402
from sgr.retrieval.encoder_training import (EncoderTrainConfig, EncoderTrainResult, save_encoder_model,  # noqa: E402
                                            train_encoder)
from sgr.retrieval.relations import CosineRelationRetriever, FineTunedRelationRetriever  # noqa: E402
from sgr.retrieval.supervision import evaluation_examples, split_validation, training_examples  # noqa: E402
from sgr.retrieval.training import RRA_KS, encoder_folder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
METAQA_RELATIONS = ("directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags",
                    "has_genre", "has_imdb_votes", "has_imdb_rating")


def vocabulary() -> list[str]:
    rels = set(METAQA_RELATIONS)
    with open(shared_data_dir() / "webqsp" / "webqsp_mini.jsonl", encoding="utf-8") as f:
        for line in f:
            rels.update(r for _, r, _ in json.loads(line)["graph"])
    return sorted(rels)


ENCODER_NAMES = {"minilm": "all-MiniLM-L6-v2", "mpnet": "all-mpnet-base-v2"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--encoder", choices=tuple(ENCODER_NAMES), default="minilm")
    ap.add_argument("--lora-rank", type=int, default=0, help="0: every weight trained; r: LoRA adapters of rank r")
    ap.add_argument("--patience", type=int, default=None)
    ap.add_argument("--hard-negatives", type=int, default=8)
    ap.add_argument("--random-negatives", type=int, default=64)
    ap.add_argument("--state", type=Path, default=None)
    ap.add_argument("--bundle", type=Path, default=None,
                    help="write an encoder bundle here for a GPU machine instead of training (see "
                         "sgr.retrieval.encoder_bundle); with --from-bundle: the bundle that was trained")
    ap.add_argument("--from-bundle", type=Path, default=None,
                    help="with --bundle: fold the adapters its run wrote here and score them")
    ap.add_argument("--also-tried", nargs="*", default=[], metavar="BUNDLE:OUT",
                    help="with --from-bundle: other bundle runs of the same data, recorded by their validation "
                         "figures (the one passed to --from-bundle should be the best of them on validation)")
    ap.add_argument("--model-file", type=Path, default=None,
                    help="also save the encoder as a relation model file here (kind encoder; its folder beside it), "
                         "for `bench/sgr.py --relation-model FILE` or SGR_RELATION_MODEL")
    ap.add_argument("--out", type=Path, default=None,
                    help="results file (default bench/results/rcr_encoder.json; rcr_encoder_mpnet.json for mpnet)")
    args = ap.parse_args()
    out = args.out or RESULTS / ("rcr_encoder.json" if args.encoder == "minilm" else f"rcr_encoder_{args.encoder}.json")
    state_dir = args.state or sgr_home() / "bench" / ("rcr_encoder" if args.encoder == "minilm"
                                                      else f"rcr_encoder_{args.encoder}")
    vocab = vocabulary()
    examples = training_examples("webqsp")
    train, val = split_validation(examples, 0.1, 0)
    test = evaluation_examples("webqsp")
    cfg = EncoderTrainConfig(epochs=args.epochs, lr=args.lr, threads=1, encoder=args.encoder,
                             lora_rank=args.lora_rank, patience=args.patience, hard_negatives=args.hard_negatives,
                             random_negatives=args.random_negatives)
    if args.bundle and not args.from_bundle:
        encoder_bundle.write(args.bundle, train, val, vocab, vocab, cfg,
                             data={"train": "webqsp_train_paths.jsonl (10 % held out, seed 0)", "test": "none"})
        print(f"encoder bundle: {args.bundle}; train it with `python -m sgr.retrieval.encoder_bundle {args.bundle} "
              f"OUT`, then `bench/rcr_encoder.py --bundle {args.bundle} --from-bundle OUT …`")
        return
    if args.from_bundle:
        if not args.bundle:
            ap.error("--from-bundle needs --bundle (the bundle that was trained)")
        folder = encoder_folder(args.model_file) if args.model_file else state_dir / "encoder"
        folded = encoder_bundle.fold(args.bundle, args.from_bundle, folder)
        result, cfg, machine = folded.result, folded.config, f"{folded.device_name} (GPU machine, bundle); scored here"
        tried = [tried_run(*pair.split(":", 1)) for pair in [f"{args.bundle}:{args.from_bundle}", *args.also_tried]]
    else:
        folder = encoder_folder(args.model_file) if args.model_file else state_dir / "encoder"
        result = train_encoder(train, val, vocab, vocab, cfg, out=folder, state_dir=state_dir,
                               progress=lambda log: print(json.dumps(asdict(log)), flush=True), show_progress=True)
        machine = "2 shared CPU cores (benchmarks and the test suite ran beside it)"
        tried = []
    if args.model_file:
        save_encoder_model(args.model_file, result, dataset="webqsp", graph_version="bench vocabulary (WebQSP slice "
                           "+ MetaQA relations)", vocabulary_size=len(vocab), config=cfg)
    tuned = FineTunedRelationRetriever(vocab, encoder=str(result.folder)).evaluate(test)
    cosine = CosineRelationRetriever(vocab, encoder=args.encoder).evaluate(test)
    write(out, result, tuned, cosine, cfg, len(test), len(vocab), machine=machine, tried=tried)


def tried_run(bundle: str, returned: str) -> dict:
    """One bundle run's settings and validation figures (its test figure is never looked at)."""
    man = encoder_bundle.manifest(Path(bundle))
    res = json.loads((Path(returned) / encoder_bundle.RESULT).read_text())
    r = res["result"]
    return {"bundle": Path(bundle).name, "config": {k: man["config"][k] for k in (
        "lora_rank", "lora_alpha", "lr", "hard_negatives", "random_negatives", "epochs", "patience")},
        "best_epoch": r["best_epoch"], "best_validation": r["best_val"], "epochs_run": len(r["history"]),
        "median_epoch_seconds": statistics.median(h["seconds"] for h in r["history"]), "device": res["device_name"]}


def write(out: Path, result: EncoderTrainResult, tuned: dict[int, float], cosine: dict[int, float],
          cfg: EncoderTrainConfig, n_test: int, n_vocab: int, *, machine: str, tried: list[dict]) -> None:
    summary = {f"webqsp/rra@{k}": tuned[k] for k in RRA_KS}
    summary |= {f"webqsp/rra@{k}_cosine": cosine[k] for k in RRA_KS}
    epoch_key = "median_epoch_seconds" + ("_gpu" if result.device == "cuda" else "")
    summary |= {"best_epoch": result.best_epoch, "epochs_run": len(result.history),
                epoch_key: statistics.median(h.seconds for h in result.history)}
    trained = "every weight trained" if not cfg.lora_rank else f"LoRA r {cfg.lora_rank}, alpha {cfg.lora_alpha}"
    write_result(out, {"summary": summary, "history": [asdict(h) for h in result.history],
                       "best_validation": result.best_val, "config": {
        **asdict(cfg), "encoder": f"{ENCODER_NAMES.get(cfg.encoder, cfg.encoder)}, {trained}",
        "train": result.train_questions, "val": result.val_questions, "test": n_test, "vocabulary": n_vocab,
        "universe": result.universe_size, "selection": "validation RRA@50",
        "scored_by": "FineTunedRelationRetriever over the saved folder", "device": result.device,
        "machine": machine}, **({"runs_compared_on_validation": tried} if tried else {})})
    print("| | " + " | ".join(f"RRA@{k}" for k in RRA_KS) + " |\n|---|" + "---|" * len(RRA_KS))
    for name, figs in (("cosine (frozen)", cosine), (f"fine-tuned, epoch {result.best_epoch}", tuned)):
        print(f"| {name} | " + " | ".join(f"{figs[k]:.3f}" for k in RRA_KS) + " |")


if __name__ == "__main__":
    main()
