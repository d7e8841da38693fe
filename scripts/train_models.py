"""Retrain the models sgr ships under ``models/`` — one command:

    SGR_HOME=/tmp/sgr-train .venv/bin/python scripts/train_models.py [all | encoder | lm | export] [--dry-run]
        [--bundle DIR [--from-bundle OUT]]

* ``encoder`` — the relation encoder: LoRA adapters on all-MiniLM-L6-v2 (:mod:`sgr.retrieval.encoder_training`),
  trained on WebQSP train paths (10 % held out, seed 0, as ``sgr relations train``), a seeded MetaQA dev sample
  and CWQ dev's training part; validation = the WebQSP and MetaQA held-out questions plus CWQ dev's held-back part;
  ranked over the relations of the loaded graph plus MetaQA's nine.
* ``lm`` — SGR's path generator: LoRA adapters (rank 32) on every linear map of every decoder layer of
  SmolLM2-135M-Instruct, trained on SGR's own schema prompts (``sgr llm tune``, :mod:`sgr.methods.sgr.tuning`):
  WebQSP train, MetaQA dev (never test) and CWQ dev's training part; validation = a seeded 5 % plus CWQ dev's
  held-back part. Five epochs take about 5 minutes on a GPU and days on two CPU cores, so without CUDA here the step
  goes through a tuning bundle (:mod:`sgr.llm.bundle`): ``lm --bundle DIR`` writes it, ``python -m sgr.llm.bundle
  DIR OUT`` trains it on the GPU machine, ``lm --bundle DIR --from-bundle OUT`` folds in what came back.
* ``export`` (``export-lm``, ``export-encoder``: one of the two) — writes ``models/<name>/`` (the weights in fp16
  safetensors and ``manifest.json``) from the two runs
  (:func:`sgr.llm.shipped.export` and :func:`sgr.retrieval.shipped.export`); the encoder is then materialised here
  and its validation RRA@k measured into its manifest (the path generator's manifest carries the training run's).

CWQ dev counts only the questions built on WebQSP *train* questions (base id ``WebQTrn-*``), split by base question
(:func:`sgr.retrieval.supervision.cwq_dev_examples`); their paths come from Neo4j, so a store holding the WebQSP
slice and CWQ dev must run (``sgr neo4j start``; the script loads the two files into an empty store). Every step
resumes: the encoder after each epoch, the LM after each 50 steps (state under ``$SGR_HOME/train-models`` and
``$SGR_HOME/tune/shipped``). Run it at low priority on a shared machine (``nice -n 10``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sgr.core.config import sgr_home  # noqa: E402
from sgr.datasets import shared_data_dir  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402

#: the recipe of the shipped artefacts (recorded in their manifests)
SEED = 0
CWQ_HELD_FRACTION = 0.15
ENCODER = {"encoder": "minilm", "lora_rank": 16, "lora_alpha": 32, "lr": 3e-4, "epochs": 3, "patience": 2,
           "hard_negatives": 4, "random_negatives": 16, "batch_size": 16, "threads": 1, "seed": SEED}
ENCODER_METAQA_PER_HOP = 100
LM = {"method": "lora", "lora_rank": 32, "lora_alpha": 32, "epochs": 5, "batch_size": 16, "lr": 5e-4,
      "patience": 2, "val_fraction": 0.05, "threads": 4, "seed": SEED}
LM_DATA = {"webqsp": True, "metaqa_per_hop": 100, "cwq": True, "cwq_held_fraction": CWQ_HELD_FRACTION,
           "examples": 0, "eval_n": 40}
LM_KEY = "shipped"  # SGR_HOME/tune/<key>/
METAQA_RELATIONS = ("directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_tags",
                    "has_genre", "has_imdb_votes", "has_imdb_rating")


def work_dir() -> Path:
    path = sgr_home() / "train-models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def store_with_data() -> GraphStore:
    """The running store, loaded with the WebQSP slice and CWQ dev when it is empty."""
    store = GraphStore.from_settings()
    store.verify()
    if not store.read("MATCH (e:Entity) RETURN e LIMIT 1"):
        from loaders.api import load_files

        files = [shared_data_dir() / "webqsp" / "webqsp_mini.jsonl", shared_data_dir() / "cwq" / "cwq_dev.jsonl"]
        print(f"loading {', '.join(f.name for f in files)} …", flush=True)
        load_files(store, files)
    return store


def encoder_data(store: GraphStore) -> dict:
    """The encoder's examples (train, validation), its ranking vocabulary and the data summary."""
    from sgr.retrieval.supervision import cwq_dev_examples, read_metaqa, split_validation, training_examples
    from sgr.retrieval.training import graph_relations

    from sgr.methods.sgr.tuning import default_test_files, question_key, read_test_questions

    tests = read_test_questions(default_test_files())
    keys = {question_key(q.text) for q in tests}
    webqsp = training_examples("webqsp")
    kept = [e for e in webqsp if question_key(e.question) not in keys]  # the same check as sgr llm tune's
    wq_train, wq_val = split_validation(kept, 0.1, SEED)
    mq = read_metaqa(shared_data_dir() / "metaqa", "dev", (1, 2, 3), limit_per_hop=ENCODER_METAQA_PER_HOP, seed=SEED)
    mq_kept = [e for e in mq if question_key(e.question) not in keys]
    mq_train, mq_val = split_validation(mq_kept, 0.1, SEED)
    cwq = cwq_dev_examples(store, held_fraction=CWQ_HELD_FRACTION, seed=SEED)
    overlap = {"test_questions_checked": len(tests), "removed": {
        "webqsp_train": len(webqsp) - len(kept),
        "metaqa_dev": len(mq) - len(mq_kept),
        "cwq_dev": sum(question_key(e.question) in keys for e in cwq.train + cwq.held)}}
    vocab = sorted(set(graph_relations(store)[0]) | set(METAQA_RELATIONS))
    if any(question_key(e.question) in keys for e in cwq.train + cwq.held):
        raise SystemExit("a CWQ dev question repeats a test question: check the data")
    train, val = wq_train + mq_train + cwq.train, wq_val + mq_val + cwq.held
    universe = list(dict.fromkeys([*vocab, *(r for e in train for r in e.relations)]))
    summary = {"webqsp_train": {"file": "webqsp/webqsp_train_paths.jsonl", "train": len(wq_train),
                                "validation": len(wq_val), "split": "10 % held out, seed 0"},
               "metaqa_dev": {"files": "metaqa/{1,2,3}hop_dev.tsv + _qtype.txt", "per_hop": ENCODER_METAQA_PER_HOP,
                              "train": len(mq_train), "validation": len(mq_val), "split": "10 % held out, seed 0"},
               "cwq_dev": {k: v for k, v in cwq.info.items()},
               "overlap_with_test": overlap,
               "vocabulary": f"{len(vocab)} relations: the loaded graph's (WebQSP slice + CWQ dev) and MetaQA's nine",
               "graph_version": store.graph_version()}
    return {"train": train, "val": val, "vocabulary": vocab, "universe": universe, "summary": summary}


def train_encoder_step(store: GraphStore, dry_run: bool = False) -> Path:
    """Train (or resume) the shipped relation encoder; returns its model file (kind ``encoder``)."""
    from sgr.retrieval.encoder_training import EncoderTrainConfig, save_encoder_model, train_encoder
    from sgr.retrieval.training import encoder_folder

    data = encoder_data(store)
    cfg = EncoderTrainConfig(**ENCODER)
    out = work_dir() / "encoder" / "relation-encoder.pt"
    out.parent.mkdir(parents=True, exist_ok=True)
    (out.parent / "data.json").write_text(json.dumps({**data["summary"], "config": asdict(cfg),
                                                      "train_ids": [e.id for e in data["train"]],
                                                      "validation_ids": [e.id for e in data["val"]]}, indent=1))
    print(f"encoder: {len(data['train'])} train, {len(data['val'])} validation, {len(data['vocabulary'])} relations "
          f"ranked, universe {len(data['universe'])}", flush=True)
    if dry_run:
        return out
    t0 = time.time()
    result = train_encoder(data["train"], data["val"], data["universe"], data["vocabulary"], cfg,
                           out=encoder_folder(out), state_dir=out.parent / "state",
                           progress=lambda log: print(json.dumps(asdict(log)), flush=True))
    save_encoder_model(out, result, dataset="shipped", graph_version=data["summary"]["graph_version"],
                       vocabulary_size=len(data["vocabulary"]), config=cfg)
    print(f"encoder trained in {time.time() - t0:.0f} s: best epoch {result.best_epoch} {result.best_val}", flush=True)
    return out


def train_lm_step(dry_run: bool = False, bundle: Path | None = None, from_bundle: Path | None = None) -> dict:
    """Tune (or resume) the shipped path generator, here or through a bundle; returns its provenance
    (``model.json``), or the bundle's manifest when only the bundle was written."""
    from sgr.methods.sgr.tuning import tune_from_options

    if dry_run:
        print(f"lm: sgr llm tune with {LM_DATA} {LM}, keyed {LM_KEY!r}")
        return {}
    return tune_from_options(graph_version=LM_KEY, bundle=bundle, from_bundle=from_bundle, **LM_DATA, **LM)


def made_by() -> dict:
    """The command, commit (and whether the tree was dirty), date and machine of this run."""
    from bench.record import provenance

    return provenance()


def export_lm() -> Path:
    """``models/schema-lm``: the LM run's best weights (LoRA adapters or top layers, fp16) and its manifest."""
    from sgr.core.checkpoints import load_checkpoint
    from sgr.llm import bundle, shipped
    from sgr.llm.finetune import BEST_FILE
    from sgr.llm.server import model_path

    run = sgr_home() / "tune" / LM_KEY
    prov = json.loads((run / "model.json").read_text())
    method = prov["config"]["method"]
    there = prov.get("trained_by_bundle")
    state = (bundle.read(Path(there["out"])).state if there
             else load_checkpoint(run / BEST_FILE[method], what="tuned weights file"))
    lora = {k: prov["config"][k] for k in ("lora_rank", "lora_alpha")} if method == "lora" else None
    # SGR's decision parameters stay SGRConfig's: those chosen for the earlier GPU-tuned weights
    # (bench/results/sgr_grid_tuned.json) did no better with these on CWQ dev (bench/experiments/models.md)
    decision: dict = {}
    data = prov["data"]
    val = prov["validation"]
    sgr_prov = {"graph_version": "shipped (any graph)", "prompt_examples": prov.get("prompt_examples", 0),
                "decision": decision, "data": {k: data[k] for k in ("sources", "held_out", "validation_ids")
                                                   if k in data},
                "config": prov["config"], "steps": prov["steps"], "epochs_run": prov["epochs_run"],
                "validation": val, "device": prov["device"]}
    info = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "made_by": made_by(),
            "training": {"recipe": {**LM, **LM_DATA}, "sources": data["sources"], "splits": data.get("splits", {}),
                         "train_examples": data["train"], "validation_examples": data["validation"],
                         "validation": "a seeded 5 % of WebQSP train and MetaQA dev, plus CWQ dev's held-back base "
                                       "questions (splits.cwq_dev.held_bases); model selection: validation loss",
                         "steps": prov["steps"], "epochs_run": prov["epochs_run"],
                         "seconds": prov["seconds"], "device": prov["device"]},
            "overlap_with_test": {"test_questions_checked": data["test_questions_checked"],
                                  "removed": data["overlap_removed_test_questions"],
                                  "how": "normalised question text equal to a question of the WebQSP test slice or "
                                         "MetaQA test (sgr.methods.sgr.tuning.drop_test_overlap); CWQ dev only "
                                         "on WebQSP *train* questions (WebQTrn-*)"},
            "validation": {"summary": {
                "path_accuracy_tuned": round(val["path_accuracy_tuned"]["exact"], 3),
                "path_accuracy_base": round(val["path_accuracy_base"]["exact"], 3),
                "questions": val["path_accuracy_tuned"]["n"], "loss_before": round(val["loss_before"], 4),
                "loss_best": round(val["best_loss"], 4)}, "detail": val}}
    out = shipped.export(state, sgr_prov, info, base=model_path(), lora=lora)
    print(f"exported {out}", flush=True)
    return out


def export_encoder(store: GraphStore) -> Path:
    """``models/relation-encoder``: the encoder run's chosen-epoch LoRA adapters (fp16) and its manifest, with the
    validation RRA@k of the encoder materialised from them (the fp16 adapters folded in)."""
    import torch

    from sgr.retrieval import shipped
    from sgr.retrieval.encoder_training import ADAPTERS, EncoderTrainConfig
    from sgr.retrieval.relations import FineTunedRelationRetriever
    from sgr.retrieval.training import cosine_rra, encoder_folder, read_meta

    run = work_dir() / "encoder"
    meta = read_meta(run / "relation-encoder.pt")
    cfg = EncoderTrainConfig(**meta["config"])
    adapters = torch.load(run / "state" / ADAPTERS, weights_only=True, map_location="cpu")
    summary = json.loads((run / "data.json").read_text())
    info = {"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "made_by": made_by(),
            "training": {"recipe": {**ENCODER, "metaqa_per_hop": ENCODER_METAQA_PER_HOP},
                         "data": {k: v for k, v in summary.items() if k not in ("train_ids", "validation_ids",
                                                                                 "config", "overlap_with_test")},
                         "train_questions": meta["train_questions"], "validation_questions": meta["val_questions"],
                         "best_epoch": meta["best_epoch"], "history": meta.get("history"),
                         "seconds": meta["seconds"], "selection": "validation RRA@50"},
            "overlap_with_test": {**summary["overlap_with_test"],
                                  "how": "normalised question text equal to a question of the WebQSP test slice or "
                                         "MetaQA test, removed before the split; CWQ dev only on WebQSP *train* "
                                         "questions (WebQTrn-*)"}}
    out = shipped.export(adapters, cfg, info)
    model = shipped.materialise(force=True)
    data = encoder_data(store)
    rra = FineTunedRelationRetriever(data["vocabulary"], encoder=str(encoder_folder(model))).evaluate(data["val"])
    cos = cosine_rra(data["val"], data["vocabulary"], cfg.encoder)
    man = shipped.manifest()
    man["validation"] = {"summary": {"rra@50": round(rra[50], 3), "rra@50_cosine": round(cos[50], 3),
                                     "questions": len(data["val"])},
                         "rra": {str(k): v for k, v in rra.items()}, "rra_cosine": {str(k): v for k, v in cos.items()},
                         "trained_run_best_val": meta["best_val"],
                         "measured_on": "the encoder materialised from the shipped fp16 adapters"}
    (out / "manifest.json").write_text(json.dumps(man, indent=1, default=str) + "\n")
    print(f"exported {out}: validation RRA@50 {rra[50]:.3f} (cosine {cos[50]:.3f})", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", nargs="?", default="all", choices=("all", "encoder", "lm", "export", "export-lm",
                                                               "export-encoder"))
    ap.add_argument("--dry-run", action="store_true", help="build the data and say what would train")
    ap.add_argument("--bundle", type=Path, help="lm: write a tuning bundle here (train it on a GPU machine)")
    ap.add_argument("--from-bundle", type=Path, help="lm: with --bundle, fold in what its run wrote here")
    args = ap.parse_args(argv)
    if args.from_bundle and not args.bundle:
        ap.error("--from-bundle needs --bundle: the bundle folder its weights were trained from")
    only_bundle = args.dry_run or (args.bundle is not None and args.from_bundle is None)
    store = store_with_data()
    try:
        if args.step in ("all", "encoder"):
            train_encoder_step(store, args.dry_run)
        if args.step in ("all", "lm"):
            train_lm_step(args.dry_run, args.bundle, args.from_bundle)
        if args.step in ("all", "export", "export-encoder") and not args.dry_run:
            export_encoder(store)
        if args.step in ("all", "export", "export-lm") and not only_bundle:
            export_lm()
    finally:
        store.close()


if __name__ == "__main__":
    main()
