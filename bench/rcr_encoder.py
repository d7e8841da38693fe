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

from sgr.core.config import sgr_home  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.retrieval.encoder_training import EncoderTrainConfig, EncoderTrainResult, train_encoder  # noqa: E402
from sgr.retrieval.relations import CosineRelationRetriever, FineTunedRelationRetriever  # noqa: E402
from sgr.retrieval.supervision import evaluation_examples, split_validation, training_examples  # noqa: E402
from sgr.retrieval.training import RRA_KS  # noqa: E402

METAQA_RELATIONS = ("directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags",
                    "has_genre", "has_imdb_votes", "has_imdb_rating")


def vocabulary() -> list[str]:
    rels = set(METAQA_RELATIONS)
    with open(shared_data_dir() / "webqsp" / "webqsp_mini.jsonl", encoding="utf-8") as f:
        for line in f:
            rels.update(r for _, r, _ in json.loads(line)["graph"])
    return sorted(rels)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--state", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "rcr_encoder.json")
    args = ap.parse_args()
    state_dir = args.state or sgr_home() / "bench" / "rcr_encoder"
    vocab = vocabulary()
    examples = training_examples("webqsp")
    train, val = split_validation(examples, 0.1, 0)
    test = evaluation_examples("webqsp")
    cfg = EncoderTrainConfig(epochs=args.epochs, lr=args.lr, threads=1)
    result = train_encoder(train, val, vocab, vocab, cfg, out=state_dir / "encoder", state_dir=state_dir,
                           progress=lambda log: print(json.dumps(asdict(log)), flush=True), show_progress=True)
    tuned = FineTunedRelationRetriever(vocab, encoder=str(result.folder)).evaluate(test)
    cosine = CosineRelationRetriever(vocab).evaluate(test)
    write(args.out, result, tuned, cosine, cfg, len(test), len(vocab))


def write(out: Path, result: EncoderTrainResult, tuned: dict[int, float], cosine: dict[int, float],
          cfg: EncoderTrainConfig, n_test: int, n_vocab: int) -> None:
    summary = {f"webqsp/rra@{k}": tuned[k] for k in RRA_KS}
    summary |= {f"webqsp/rra@{k}_cosine": cosine[k] for k in RRA_KS}
    summary |= {"best_epoch": result.best_epoch, "epochs_run": len(result.history),
                "median_epoch_seconds": statistics.median(h.seconds for h in result.history)}
    out.write_text(json.dumps({"summary": summary, "history": [asdict(h) for h in result.history],
                               "best_validation": result.best_val, "config": {
        **asdict(cfg), "encoder": "all-MiniLM-L6-v2, every weight trained", "train": result.train_questions,
        "val": result.val_questions, "test": n_test, "vocabulary": n_vocab, "universe": result.universe_size,
        "selection": "validation RRA@50", "scored_by": "FineTunedRelationRetriever over the saved folder",
        "machine": "2 shared CPU cores (benchmarks and the test suite ran beside it)"}}, indent=2))
    print("| | " + " | ".join(f"RRA@{k}" for k in RRA_KS) + " |\n|---|" + "---|" * len(RRA_KS))
    for name, figs in (("cosine (frozen)", cosine), (f"fine-tuned, epoch {result.best_epoch}", tuned)):
        print(f"| {name} | " + " | ".join(f"{figs[k]:.3f}" for k in RRA_KS) + " |")


if __name__ == "__main__":
    main()
