"""Greedy decoding under a grammar at the model's speed: the grammar asked about one token, not the whole vocabulary.

llama-cpp-python (0.3.36, ``Llama._init_sampler``) samples a greedy completion under a GBNF grammar through one
llama.cpp sampler chain, ``penalties → grammar → greedy``, applied to the whole vocabulary at every step: the grammar
sampler tests each of the 49,152 tokens against its parse stacks. In SGR's schema call (a relation path under the
graph grammar, :mod:`sgr.methods.sgr.trie`) that was 17 % of the server's time, a third as much as the model itself.

llama.cpp's own sampler for its tools (``common_sampler_sample`` in ``common/sampling.cpp``) asks the grammar first
about the token it would pick without it, and filters the whole vocabulary only when the grammar rejects that token.
:class:`FirstTrySampler` does the same for greedy decoding, where it gives the same token as the chain:

    t* = argmax_t ℓ'_t                     ℓ' = the logits after the repetition penalties
    token = t*                              if the grammar accepts t*
          = argmax_{t accepted} ℓ'_t        else (the chain's own grammar step over the whole vocabulary)

The highest-scoring token the grammar accepts is ``t*`` whenever the grammar accepts ``t*``; ties go to the lower
token id, as llama.cpp's greedy sampler breaks them (the first maximum). The penalties and the grammar are llama.cpp's
own samplers, made with the same arguments as in the chain, and both are told the chosen token, as the chain's
``llama_sampler_sample`` tells its members. The reply, token log-probabilities included (they are read from the
model's logits, not from the sampler), is the same.

:func:`install` makes ``Llama._init_sampler`` return a :class:`FirstTrySampler` for the completions it covers (greedy,
a grammar, no logits processor) on the llama-cpp-python version it was checked against (:data:`CHECKED_VERSION`);
every other completion gets the library's chain.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

#: The llama-cpp-python version whose ``_init_sampler`` chain :class:`FirstTrySampler` was checked against (the
#: version ``scripts/install_llm.sh`` installs); on any other, :func:`install` leaves the library as it is.
CHECKED_VERSION = "0.3.36"

#: llama.cpp's ``llama_token_data`` as numpy sees it: (token id, logit, probability), C-aligned.
TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class FirstTrySampler:
    """The chain ``penalties → grammar → greedy`` of one completion, the grammar asked first about the greedy token.

    ``sample`` and ``accept`` have the signatures of ``llama_cpp._internals.LlamaSampler``'s, the two that ``Llama``
    calls on its sampler."""

    def __init__(self, model: Any, n_vocab: int, grammar: Any, penalties: dict[str, Any]) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self._llama = llama_cpp
        self.penalties = _internals.LlamaSampler()
        self.penalties.add_penalties(**penalties)
        self.grammar = _internals.LlamaSampler()
        self.grammar.add_grammar(model, grammar)
        self.n_vocab = n_vocab
        self._data = (llama_cpp.llama_token_data * n_vocab)()
        self._view = np.frombuffer(self._data, dtype=TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self._one = (llama_cpp.llama_token_data * 1)()
        self.first_tries = 0  # tokens the grammar accepted at the first try
        self.full_passes = 0  # tokens that needed the whole vocabulary filtered

    def _candidates(self, data: Any, size: int) -> Any:
        return self._llama.llama_token_data_array(data=data, size=size, selected=-1, sorted=False)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """The token of the logits at ``idx`` (as ``llama_sampler_sample``), told to the penalties and the grammar."""
        llama = self._llama
        logits = np.ctypeslib.as_array(llama.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        view = self._view
        view["id"] = self._ids
        view["logit"] = logits
        view["p"] = 0.0
        every = self._candidates(self._data, self.n_vocab)
        llama.llama_sampler_apply(self.penalties.sampler, ctypes.byref(every))
        size = int(every.size)
        best = int(np.argmax(view["logit"][:size]))
        one = self._one
        one[0].id, one[0].logit, one[0].p = int(view["id"][best]), float(view["logit"][best]), 0.0
        llama.llama_sampler_apply(self.grammar.sampler, ctypes.byref(self._candidates(one, 1)))
        if np.isfinite(one[0].logit):
            self.first_tries += 1
        else:  # rejected: the grammar filters the whole vocabulary, as in the chain
            self.full_passes += 1
            llama.llama_sampler_apply(self.grammar.sampler, ctypes.byref(every))
            size = int(every.size)
            best = int(np.argmax(view["logit"][:size]))
        token = int(view["id"][best])
        self.accept(token)
        return token

    def accept(self, token: int) -> None:
        self._llama.llama_sampler_accept(self.penalties.sampler, token)
        self._llama.llama_sampler_accept(self.grammar.sampler, token)

    def reset(self) -> None:
        self._llama.llama_sampler_reset(self.penalties.sampler)
        self._llama.llama_sampler_reset(self.grammar.sampler)

    def close(self) -> None:
        self.penalties.close()
        self.grammar.close()


def covered(kwargs: dict[str, Any]) -> bool:
    """Whether ``_init_sampler(**kwargs)`` builds exactly ``penalties → grammar → greedy`` (what the sampler replaces)."""
    return (kwargs.get("grammar") is not None and kwargs.get("temp", 0.8) == 0.0
            and kwargs.get("logits_processor") is None)


def install() -> bool:
    """Make ``Llama._init_sampler`` build a :class:`FirstTrySampler` where it covers the chain (idempotent); False,
    changing nothing, on a llama-cpp-python other than :data:`CHECKED_VERSION`."""
    import llama_cpp
    from llama_cpp.llama import Llama

    if llama_cpp.__version__ != CHECKED_VERSION:
        return False
    library = getattr(Llama._init_sampler, "library_init_sampler", Llama._init_sampler)

    def init_sampler(self: Any, **kwargs: Any) -> Any:
        if not covered(kwargs):
            return library(self, **kwargs)
        penalties = dict(n_vocab=self._n_vocab, penalty_last_n=self.last_n_tokens_size,
                         penalty_repeat=kwargs.get("repeat_penalty", 1.0),
                         penalty_freq=kwargs.get("frequency_penalty", 0.0),
                         penalty_present=kwargs.get("presence_penalty", 0.0))
        return FirstTrySampler(self._model, self._n_vocab, kwargs["grammar"], penalties)

    init_sampler.library_init_sampler = library  # type: ignore[attr-defined]
    Llama._init_sampler = init_sampler  # type: ignore[method-assign]
    return True
