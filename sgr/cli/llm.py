"""``sgr llm serve|status|stop``: the local model server (llama.cpp + SmolLM2-135M-Instruct, sgr.llm.server)."""

from __future__ import annotations

from typing import Optional

import typer

from sgr.cli.app import group
from sgr.cli.render import console


def register(app: typer.Typer) -> None:
    llm_app = group(app, "llm", "Start, stop and inspect the local LLM server (llama.cpp + SmolLM2-135M-Instruct).")

    @llm_app.command("serve")
    def llm_serve(
        port: Optional[int] = typer.Option(None, help="HTTP port (default: a free one)"),
        n_ctx: int = typer.Option(4096, "--n-ctx", help="context window in tokens"),
        threads: Optional[int] = typer.Option(None, help="CPU threads (default: half the cores, at least 1)"),
    ) -> None:
        """Start the OpenAI-compatible local model server on 127.0.0.1 (in the background) and wait until it answers."""
        from sgr.llm import server

        info = server.start(port=port, n_ctx=n_ctx, n_threads=threads)
        console.print(f"local LLM is serving [bold]{info.model}[/] at [bold]{info.base_url}[/] "
                      f"(pid {info.pid}, log {info.log})")
        console.print("sgr uses it whenever SGR_LLM_BASE_URL is unset; stop it with `sgr llm stop`")

    @llm_app.command("status")
    def llm_status() -> None:
        """Say whether the local model server runs, where, and which model it serves."""
        from sgr.llm import server

        info = server.status()
        if info is None:
            console.print("the local LLM server is not running (start it with `sgr llm serve`)")
            raise typer.Exit(1)
        ready = "answering" if server.models_endpoint_ready(info.base_url) else "NOT answering"
        console.print(f"running: {info.base_url} model {info.model} pid {info.pid} ({ready}) log {info.log}")

    @llm_app.command("stop")
    def llm_stop() -> None:
        """Stop the local model server."""
        from sgr.llm import server

        console.print("stopped" if server.stop() else "the local LLM server was not running")
