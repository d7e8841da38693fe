"""``sgr llm serve|status|stop``: the local model server (llama.cpp + SmolLM2-135M-Instruct, sgr.llm.server)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import console, plain, t


def register(app: typer.Typer) -> None:
    llm_app = group(app, "llm", "Start, stop and inspect the local LLM server (llama.cpp + SmolLM2-135M-Instruct).")

    @llm_app.command("serve")
    def llm_serve(
        port: Optional[int] = typer.Option(None, help="HTTP port (default: a free one)"),
        n_ctx: int = typer.Option(4096, "--n-ctx", help="context window in tokens"),
        threads: Optional[int] = typer.Option(None, help="CPU threads (default: half the cores, at least 1)"),
        model: str = typer.Option("auto", help="auto (default: the model tuned for the loaded graph, else the "
                                  "shipped one, else base) | base (the packaged SmolLM2) | shipped (models/schema-lm) "
                                  "| tuned (sgr llm tune's model for the loaded graph) | PATH.gguf"),
    ) -> None:
        """Start the OpenAI-compatible local model server on 127.0.0.1 (in the background) and wait until it answers."""
        from sgr.api import describe_llm, serve_llm

        info = serve_llm(port=port, n_ctx=n_ctx, threads=threads, model=model)
        console.print(f"local LLM is serving [bold]{t(info.model)}[/] at [bold]{t(info.base_url)}[/] "
                      f"(pid {info.pid}, log {info.log})")
        plain(describe_llm(info))
        console.print("sgr uses it whenever SGR_LLM_BASE_URL is unset; stop it with `sgr llm stop`")

    @llm_app.command("status")
    def llm_status() -> None:
        """Say whether the local model server runs, where, and which model it serves."""
        from sgr.api import llm_status as running_server

        status = running_server()
        if status is None:
            console.print("the local LLM server is not running (start it with `sgr llm serve`)")
            raise typer.Exit(1)
        info, answers, weights = status
        ready = "answering" if answers else "NOT answering"
        console.print(f"running: {t(info.base_url)} model {t(info.model)} pid {info.pid} ({ready}) log {t(info.log)}")
        plain(weights)

    @llm_app.command("tune")
    def llm_tune(
        dataset: Optional[str] = typer.Option(None, help="a user dataset (questions, topic entities, answers): "
                                              "its topic→answer paths come from the loaded graph"),
        split: Optional[str] = typer.Option(None, help="split of --dataset"),
        webqsp: bool = typer.Option(True, help="train on WebQSP train questions with gold paths"),
        webqsp_sample: Optional[int] = typer.Option(None, help="a seeded sample of this many WebQSP train questions"),
        metaqa_per_hop: int = typer.Option(500, help="MetaQA dev questions per hop (0: none)"),
        cwq: bool = typer.Option(False, help="also CWQ dev's questions built on WebQSP train questions, their paths "
                                 "from the loaded graph (load webqsp_mini.jsonl and cwq_dev.jsonl), split by base "
                                 "question: a held-back part for model selection"),
        from_graph: int = typer.Option(0, min=0, help="also this many training questions written from the loaded "
                                       "graph itself (sampled relation paths, templates; no labelled question)"),
        from_graph_hops: int = typer.Option(3, min=1, help="--from-graph: the longest walk, in hops (CVTs free)"),
        examples: int = typer.Option(0, min=0, help="worked examples in each training prompt (the nearest other "
                                     "training questions); SGR then shows the tuned model as many"),
        method: str = typer.Option("top", help="top: the top layers on cached frozen states (CPU); lora: adapters "
                                   "on every layer (GPU)"),
        top_layers: int = typer.Option(4, help="method top: decoder layers trained (the rest frozen, outputs cached)"),
        lora_rank: int = typer.Option(16, help="method lora: adapter rank"),
        epochs: int = typer.Option(3), batch_size: int = typer.Option(16), lr: float = typer.Option(2e-4),
        seed: int = typer.Option(0), val_fraction: float = typer.Option(0.1), patience: int = typer.Option(1),
        device: str = typer.Option("auto", help="auto | cpu | cuda"), threads: int = typer.Option(1),
        eval_n: int = typer.Option(100, help="validation questions answered by the base and the tuned model"),
        graph_version: Optional[str] = typer.Option(None, help="key of the run (default: the loaded graph's version)"),
        bundle: Optional[Path] = typer.Option(None, help="write a tuning bundle here for another machine (a GPU "
                                              "one) instead of training; see `python -m sgr.llm.bundle`"),
        from_bundle: Optional[Path] = typer.Option(None, help="with --bundle: export the weights its run wrote here"),
    ) -> None:
        """Tune the local model on SGR's schema prompts for the loaded graph; export it for `sgr llm serve --model
        tuned`."""
        from sgr.api import tune

        prov = tune(dataset=dataset, split=split, webqsp=webqsp, webqsp_sample=webqsp_sample,
                    metaqa_per_hop=metaqa_per_hop, examples=examples, graph_version=graph_version, eval_n=eval_n,
                    cwq=cwq, from_graph=from_graph, from_graph_hops=from_graph_hops,
                    log=plain, bundle=bundle, from_bundle=from_bundle, method=method, lora_rank=lora_rank,
                    top_layers=top_layers, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
                    val_fraction=val_fraction, patience=patience, device=device, threads=threads)
        if "weights" in prov:
            console.print(f"serve it with: sgr llm serve --model tuned   (weights {t(prov['weights'])})")

    @llm_app.command("stop")
    def llm_stop() -> None:
        """Stop the local model server."""
        from sgr.api import stop_llm

        console.print("stopped" if stop_llm() else "the local LLM server was not running")
