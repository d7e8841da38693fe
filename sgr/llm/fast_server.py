"""The local model's server: llama-cpp-python's OpenAI server with sgr's speed-ups, each giving the same reply.

* :mod:`sgr.llm.fast_logprobs` — token log-probabilities at the model's speed (a token's top alternatives found with
  numpy instead of a sort of the vocabulary; the log-softmax of the rows a completion reads; the prompt cache restored
  without a pass over the whole score matrix);
* :mod:`sgr.llm.fast_sampling` — greedy decoding under a grammar asks the grammar about one token first.

``python -m sgr.llm.fast_server ARGS`` is ``python -m llama_cpp.server ARGS`` with them installed; that is how
:func:`sgr.llm.server.launch` starts the local server.
"""

from __future__ import annotations

import sys


def install() -> list[str]:
    """Install every speed-up (idempotent); the names of those installed (on a llama-cpp-python other than the one
    they were checked against, only the log-probability ranking)."""
    from sgr.llm import fast_logprobs, fast_sampling

    installed = ["logprob ranking"]
    if fast_logprobs.install():
        installed += ["logprob rows", "cache restore"]
    if fast_sampling.install():
        installed.append("grammar first try")
    return installed


def main() -> None:
    print(f"sgr: llama-cpp-python with {', '.join(install())}", file=sys.stderr)
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
