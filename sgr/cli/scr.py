"""``sgr scr train|paths``: SCR, the stepwise contrastive GNN retriever (sgr.methods.scr)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import show_scr_paths, show_scr_training


def register(app: typer.Typer) -> None:
    scr_app = group(app, "scr", "SCR, the stepwise contrastive GNN retriever: train it, list its paths.")

    @scr_app.command("train")
    def scr_train(
        dataset: str = typer.Option(..., "--dataset", help="metaqa (trains on dev, validates on held-out dev), "
                                                           "webqsp (80/20 id-hash split of the slice) or a question "
                                                           "file"),
        device: str = typer.Option("auto", "--device", help="auto, cpu or cuda"),
        out: Optional[Path] = typer.Option(None, "--out", help="checkpoint folder (default "
                                                               "$SGR_HOME/scr/<dataset>[-single-step])"),
        encoder: str = typer.Option("minilm", help="frozen/initial encoder: minilm (384-d) or mpnet (768-d)"),
        epochs: int = typer.Option(5, help="most epochs (early stopping may end sooner)"),
        batch_size: int = typer.Option(16, help="questions per batch"),
        train_per_hop: Optional[int] = typer.Option(None, help="training questions per MetaQA hop (default 1000; "
                                                               "other datasets: at most this many, default all)"),
        val_per_hop: Optional[int] = typer.Option(None, help="validation questions per MetaQA hop (default 100; "
                                                             "other datasets: at most this many, default all)"),
        trainable_layers: Optional[int] = typer.Option(None, help="train only the top K encoder layers "
                                                                  "(default: all)"),
        tau: float = typer.Option(0.05, help="InfoNCE temperature"),
        lr_encoder: float = typer.Option(3e-5, help="learning rate of the question encoder"),
        lr_graph: float = typer.Option(1e-3, help="learning rate of the GNN and candidate layers"),
        patience: int = typer.Option(2, help="epochs without a better validation Hits@1 before stopping"),
        seed: int = typer.Option(0, help="seed of sampling, initialisation and batch order"),
        supervision: str = typer.Option("shortest", help="step targets: shortest (the paper's: shortest topic→answer "
                                                         "walks) or gold-first (walks along the question's gold "
                                                         "relation path where it has one, e.g. MetaQA's type)"),
        single_step: bool = typer.Option(False, "--single-step", help="train the 'w/o multi-step' ablation model"),
        entity_candidates: bool = typer.Option(False, "--entity-candidates",
                                               help="score entities only (eq. 7 as printed), not edges"),
        threads: int = typer.Option(2, help="torch CPU threads"),
        graph_version: Optional[str] = typer.Option(None, help="use cached subgraphs of this graph version without "
                                                               "Neo4j"),
        bundle: Optional[Path] = typer.Option(None, "--bundle", help="write the training step to this folder for a "
                                                                     "GPU machine instead of training here "
                                                                     "(python -m sgr.methods.scr.bundle there)"),
        from_bundle: Optional[Path] = typer.Option(None, "--from-bundle", help="with --bundle: fold the weights that "
                                                                               "a bundle run returned to this folder"),
        time_budget: float = typer.Option(0.0, help="seconds the training may take (0: no limit): no epoch starts "
                                                    "that would end past it, one still running ends there"),
    ) -> None:
        """Train SCR with stepwise InfoNCE; writes best.pt/last.pt/history.json and records best.pt as the default.
        With --bundle, writes the same training step for a GPU machine; --bundle with --from-bundle folds what
        it returned (the data options are then the bundle's)."""
        from sgr.api import train_scr
        from sgr.core.errors import ConfigError

        if from_bundle is not None and bundle is None:
            raise ConfigError("--from-bundle needs --bundle (the folder the run was written from)")
        res = train_scr(dataset, out=out, single_step=single_step, device=device, threads=threads,
                        graph_version=graph_version, supervision=supervision, train_per_hop=train_per_hop,
                        val_per_hop=val_per_hop, bundle=bundle, from_bundle=from_bundle,
                        model=dict(encoder=encoder, tau=tau, edge_candidates=not entity_candidates,
                                   trainable_layers=trainable_layers),
                        training=dict(epochs=epochs, batch_size=batch_size, lr_encoder=lr_encoder, lr_graph=lr_graph,
                                      patience=patience, seed=seed, time_budget=time_budget))
        if bundle is not None and from_bundle is None:
            from sgr.cli.render import console

            console.print(f"wrote {res}: run `python -m sgr.methods.scr.bundle {bundle} OUT --device cuda` on the "
                          "GPU machine, then this command with --from-bundle OUT")
            return
        show_scr_training(res)

    @scr_app.command("paths")
    def scr_paths_cmd(
        question: str = typer.Argument(..., help="the question text"),
        topic: list[str] = typer.Option(..., "--topic", "-t", help="topic entity id or name (repeatable)"),
        k: int = typer.Option(10, "-k", help="beam size K"),
        checkpoint: Optional[Path] = typer.Option(None, help="SCR checkpoint (default: the last trained)"),
        device: str = typer.Option("auto", "--device", help="auto, cpu or cuda"),
    ) -> None:
        """Print SCR's top-K reasoning paths and their probabilities P(a, p | q) for a question."""
        from sgr.api import connect, scr_paths

        with connect() as store:
            show_scr_paths(scr_paths(question, topic, store=store, k=k, checkpoint=checkpoint, device=device))
