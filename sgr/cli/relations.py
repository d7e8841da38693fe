"""``sgr relations train|eval|top``: RCR's relation retriever (sgr.retrieval.relations)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import console, err_console, relations_epoch, show_relations_training, show_rra, show_top_relations
from sgr.core.errors import ConfigError


def parse_ks(text: str) -> list[int]:
    """``--k 10,50`` as ``[10, 50]``; ConfigError for anything but positive integers."""
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ConfigError(f"--k must be comma-separated integers, got {text!r}") from exc
    if not ks or min(ks) < 1:
        raise ConfigError(f"--k must list positive integers, got {text!r}")
    return ks


def register(app: typer.Typer) -> None:
    relations_app = group(app, "relations", "RCR's relation retriever: train the heads or the encoder, "
                                            "evaluate RRA@k, rank relations.")

    @relations_app.command("train")
    def relations_train(
        dataset: str = typer.Option(..., "--dataset", help="webqsp (train paths) | metaqa (dev, all hops) | graph "
                                    "(questions written from the loaded graph itself, no labelled question: "
                                    "--limit of them, 3,000 by default)"),
        method: str = typer.Option("heads", help="heads: the paper's two heads over the frozen encoder (RCR §4.1); "
                                                 "encoder: the encoder itself fine-tuned (InfoNCE, mined hard "
                                                 "negatives; about 10 min an epoch of WebQSP on one CPU core)"),
        epochs: Optional[int] = typer.Option(None, help="epochs (heads: 50, the paper's; encoder: 10)"),
        lr: Optional[float] = typer.Option(None, help="learning rate (heads: Adam 5e-4, the paper's WebQSP value; "
                                                      "encoder: AdamW 5e-5)"),
        batch_size: int = typer.Option(32, "--batch-size", help="questions per step (paper: 1; slower on CPU)"),
        negatives: Optional[int] = typer.Option(None, help="heads: sampled negative relations per question (80, "
                                                           "the paper's); encoder: uniform negatives per batch (64)"),
        hard_negatives: Optional[int] = typer.Option(None, "--hard-negatives",
                                                     help="of those, the model's top-ranked non-gold relations, "
                                                          "mined every epoch (heads: 0 of the 80; encoder: 8 more "
                                                          "per question)"),
        gamma: Optional[float] = typer.Option(None, help="heads only: margin of the ranking loss (paper: 0.5)"),
        tau: Optional[float] = typer.Option(None, help="encoder only: InfoNCE temperature (0.05)"),
        encoder: str = typer.Option("minilm", help="the sentence encoder: minilm (384-d) or mpnet (768-d; with "
                                                   "--method encoder on a GPU: see --bundle)"),
        lora_rank: int = typer.Option(0, "--lora-rank", help="encoder only: 0 trains every weight; r trains LoRA "
                                                             "adapters of rank r, folded in at the end"),
        device: str = typer.Option("auto", help="encoder only: auto | cpu | cuda"),
        bundle: Optional[Path] = typer.Option(None, help="encoder only: write an encoder bundle here for a GPU "
                                              "machine instead of training; see `python -m "
                                              "sgr.retrieval.encoder_bundle`"),
        from_bundle: Optional[Path] = typer.Option(None, "--from-bundle",
                                                   help="with --bundle: fold the weights its run wrote here and "
                                                        "save the model as a local run does"),
        val_fraction: float = typer.Option(0.1, "--val-fraction", help="share held out for model selection"),
        select_k: int = typer.Option(50, "--select-k", help="keep the epoch with the best validation RRA@k"),
        patience: Optional[int] = typer.Option(None, help="stop after N epochs without a better validation RRA"),
        limit: Optional[int] = typer.Option(None, help="WebQSP: first N questions; MetaQA: N per hop (fixed seed); "
                                            "graph: N questions written"),
        seed: int = typer.Option(0, help="seed of the split, the negatives and the initialisation"),
        out: Optional[Path] = typer.Option(None, help="model file (default: $SGR_HOME/cache/relations/"
                                           "<dataset>[-encoder]-<graph version>.pt, found by --model auto; a "
                                           "fine-tuned encoder's folder sits beside it, FILE.encoder, and its "
                                           "resumable state in FILE.state)"),
        data: Optional[Path] = typer.Option(None, help="shared data folder (default: $SGR_SHARED_DATA or "
                                                       "../shared/data)"),
    ) -> None:
        """Train RCR's relation retriever against the loaded graph's relation vocabulary."""
        from sgr.api import connect, train_relations

        given = {"epochs": epochs, "lr": lr, "patience": patience, "hard_negatives": hard_negatives}
        if from_bundle and not bundle:
            raise ConfigError("--from-bundle needs --bundle (the bundle that was trained)")
        if method == "heads":
            encoder_only = {"--tau": tau is not None, "--lora-rank": lora_rank != 0, "--device": device != "auto",
                            "--bundle": bundle is not None}
            if any(encoder_only.values()):
                raise ConfigError(f"{next(k for k, v in encoder_only.items() if v)} is a setting of --method encoder")
            config = dict(batch_size=batch_size, select_k=select_k, seed=seed, encoder=encoder,
                          **{k: v for k, v in {**given, "negatives": negatives, "gamma": gamma}.items()
                             if v is not None})
        elif method == "encoder":
            if gamma is not None:
                raise ConfigError("--gamma is a setting of --method heads")
            config = dict(batch_size=batch_size, select_k=select_k, seed=seed, encoder=encoder, lora_rank=lora_rank,
                          device=device, **{k: v for k, v in {**given, "random_negatives": negatives, "tau": tau}.items()
                                            if v is not None})
        else:
            raise ConfigError(f"unknown --method {method!r} (known: heads, encoder)")
        with connect() as store:
            trained = train_relations(dataset, store=store, method=method, config=config, data_dir=data, limit=limit,
                                      val_fraction=val_fraction, out=out, progress=relations_epoch, bundle=bundle,
                                      from_bundle=from_bundle)
        if bundle and not from_bundle:
            console.print(f"encoder bundle: {bundle}; train it with `python -m sgr.retrieval.encoder_bundle "
                          f"{bundle} OUT`, then `sgr relations train --bundle {bundle} --from-bundle OUT`")
            return
        show_relations_training(dataset, trained)

    @relations_app.command("eval")
    def relations_eval(
        dataset: list[str] = typer.Option(["webqsp"], "--dataset",
                                          help="webqsp | metaqa-1hop | metaqa-2hop | metaqa-3hop (repeatable)"),
        model: str = typer.Option("auto", help="model file, 'auto' (trained on this graph version) or 'cosine'"),
        k: str = typer.Option("10,50,100,200", help="comma-separated k of RRA@k"),
        limit: Optional[int] = typer.Option(None, help="questions per set (MetaQA: fixed-seed sample)"),
        seed: int = typer.Option(0, help="seed of the MetaQA sample"),
        data: Optional[Path] = typer.Option(None, help="shared data folder"),
    ) -> None:
        """RRA@k (RCR §5.1) of the trained retriever beside plain cosine on the graph's relation vocabulary."""
        from sgr.api import connect, evaluate_relations, relation_retrievers

        ks = parse_ks(k)
        with connect() as store:
            retrievers = relation_retrievers(store=store, model=model)
            if model != "cosine" and len(retrievers) == 1:
                err_console.print("no trained model for this graph version: showing cosine only "
                                  "(train one with `sgr relations train`)")
            for name in dataset:
                show_rra(evaluate_relations(retrievers, name, data_dir=data, limit=limit, seed=seed, ks=ks), ks)

    @relations_app.command("top")
    def relations_top(
        question: str = typer.Argument(..., help="the question"),
        k: int = typer.Option(10, "-k", help="how many relations"),
        model: str = typer.Option("auto", help="model file, 'auto' or 'cosine'"),
    ) -> None:
        """The k relations of the graph most similar to a question."""
        from sgr.api import connect, rank_relations

        with connect() as store:
            name, size, ranked = rank_relations(question, store=store, k=k, model=model)
        show_top_relations(name, size, ranked)
