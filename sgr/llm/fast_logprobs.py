"""llama-cpp-python's OpenAI server, with token log-probabilities at the model's speed.

To give a generated token's top alternatives, llama-cpp-python (0.3.36, ``Llama._create_completion``) ranks the
whole vocabulary in Python for every token: ``sorted(zip(logprobs_token, range(len(logprobs_token))),
reverse=True)``, 49,152 numpy scalars compared pair by pair, then keeps the first ``logprobs`` of them. That is about
0.1 s a token on this machine class. SGR's schema call asks every token's log-probability (its path score ρ reads
them; ``top_logprobs=1``), so a 59-token relation path took 10 s, of which 2.3 s were the model's own work.

:func:`install` replaces two names inside ``llama_cpp.llama`` only, ``zip`` and ``sorted``, with :func:`pairs` and
:func:`ranked`. ``zip(row, range(len(row)))`` over a vocabulary-sized row gives the same pairs as before
(:class:`VocabularyPairs`), and sorting them in reverse gives the ``k`` largest, found with ``numpy.partition``,
where ``k`` is the ``logprobs`` the calling completion asked for. They are ordered as Python's sort orders the
pairs: by log-probability, then by token id, both descending. The caller keeps ``[:logprobs]`` of the list, so its
reply is the same, item for item and type for type. Every other call goes to the built-ins, and a sort whose
caller has no integer ``logprobs`` ranks the whole row as before.

Two more replacements concern the score matrix that log-probabilities need (``logits_all``: one row of
``n_vocab`` logits per position of the context, ``n_ctx × n_vocab`` floats, 805 MB at 4,096 × 49,152):

* :func:`load_state` is ``Llama.load_state`` without its pass over every row after the restored ones
  (``rest[rest > 0] = 0.0``, 200 million comparisons each time the prompt cache restores a prompt, 9 % of the
  server's time in SGR's schema calls). Nothing reads those rows before :meth:`Llama.eval` writes them: the matrix is
  allocated uninitialised (``np.ndarray``) and read only up to ``n_tokens``.
* :func:`logits_to_logprobs` gives the log-softmax of a matrix lazily (:class:`LazyLogprobs`): a completion computes
  it for every position of the context, prompt included, and keeps the rows from the prompt's last on
  (``[token_offset:]``); only those are computed now. A single row, or any use other than a slice, gets the
  library's own result.

:func:`install` makes all four replacements; :mod:`sgr.llm.fast_server` starts the server with them.
"""

from __future__ import annotations

import builtins
import ctypes
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

#: Rows shorter than this are not a vocabulary: zipped and sorted by the built-ins.
MIN_VOCABULARY = 1024


class VocabularyPairs:
    """``zip(row, range(len(row)))``, the same iterator, that also keeps the row for :func:`ranked`."""

    def __init__(self, row: Sequence[Any]) -> None:
        self.row = row
        self._pairs = builtins.zip(row, range(len(row)))
        self.started = False

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return self

    def __next__(self) -> tuple[Any, int]:
        self.started = True
        return next(self._pairs)


def pairs(*iterables: Any, **kwargs: Any) -> Any:
    """``zip`` for ``llama_cpp.llama``: a :class:`VocabularyPairs` for (a vocabulary row, ``range`` of its length),
    the built-in otherwise."""
    if len(iterables) == 2 and not kwargs:
        row, ids = iterables
        if ((isinstance(row, list) or (isinstance(row, np.ndarray) and row.ndim == 1)) and isinstance(ids, range)
                and ids.start == 0 and ids.step == 1 and len(ids) == len(row) >= MIN_VOCABULARY):
            return VocabularyPairs(row)
    return builtins.zip(*iterables, **kwargs)


def top_pairs(row: Sequence[Any], k: int) -> list[tuple[Any, int]]:
    """The ``k`` largest ``(row[i], i)`` pairs, ordered as ``sorted(zip(row, range(len(row))), reverse=True)`` orders
    them: by value, then by index, both descending."""
    n = len(row)
    if k <= 0:
        return []
    values = np.asarray(row)
    if k >= n:
        chosen = np.arange(n)
    else:
        kth = np.partition(values, n - k)[n - k]  # the k-th largest value
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[::-1][:k - len(above)]  # among ties the larger ids come first
        chosen = np.concatenate([above, tied])
    order = sorted(chosen.tolist(), key=lambda i: (values[i], i), reverse=True)
    return [(row[i], i) for i in order]


def ranked(iterable: Any, /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    """``sorted`` for ``llama_cpp.llama``: the calling completion's ``logprobs`` largest pairs of a fresh
    :class:`VocabularyPairs` sorted in reverse (all the caller reads), the built-in otherwise."""
    if isinstance(iterable, VocabularyPairs) and not iterable.started and key is None and reverse:
        k = sys._getframe(1).f_locals.get("logprobs")
        if isinstance(k, int) and not isinstance(k, bool):
            return top_pairs(iterable.row, k)
    return builtins.sorted(iterable, key=key, reverse=reverse)


def load_state(self: Any, state: Any) -> None:
    """``Llama.load_state`` of llama-cpp-python 0.3.36 without the pass over the score rows it does not restore."""
    import llama_cpp

    self.scores[: state.n_tokens, :] = state.scores
    self.input_ids = state.input_ids.copy()
    self.n_tokens = state.n_tokens
    self._requires_eval = True
    self._seed = state.seed
    size = state.llama_state_size
    data = (ctypes.c_uint8 * size).from_buffer_copy(state.llama_state)
    if llama_cpp.llama_state_set_data(self._ctx.ctx, data, size) != size:
        raise RuntimeError("Failed to set llama state data")


class LazyLogprobs:
    """The log-softmax of a score matrix along its last axis, computed for the rows a slice asks for."""

    def __init__(self, logits: np.ndarray, library: Any) -> None:
        self.logits = logits
        self.library = library

    def __len__(self) -> int:
        return len(self.logits)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return self.library(self.logits[key])
        return np.asarray(self)[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.library(self.logits)
        return out if dtype is None else out.astype(dtype)

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter(np.asarray(self))

    def __getattr__(self, name: str) -> Any:  # .tolist(), .shape …: the whole result, as the library gives it
        if name.startswith("__"):  # numpy's protocol probes (__array_interface__ …): not an array itself
            raise AttributeError(name)
        return getattr(np.asarray(self), name)


def lazy_logprobs(library: Any) -> Any:
    """``Llama.logits_to_logprobs`` made lazy for matrices (rows computed on slicing), the library's for the rest."""
    def logits_to_logprobs(logits: Any, axis: int = -1) -> Any:
        if axis == -1 and isinstance(logits, np.ndarray) and logits.ndim == 2:
            return LazyLogprobs(logits, library)
        return library(logits, axis=axis)

    logits_to_logprobs.library = library  # type: ignore[attr-defined]
    return staticmethod(logits_to_logprobs)


def install() -> bool:
    """Use :func:`pairs` and :func:`ranked` inside ``llama_cpp.llama`` (idempotent); on llama-cpp-python
    :data:`sgr.llm.fast_sampling.CHECKED_VERSION` also :func:`load_state` and the lazy ``logits_to_logprobs`` (True
    then)."""
    import llama_cpp
    import llama_cpp.llama as module

    from sgr.llm.fast_sampling import CHECKED_VERSION

    module.zip = pairs  # type: ignore[attr-defined]
    module.sorted = ranked  # type: ignore[attr-defined]
    if llama_cpp.__version__ != CHECKED_VERSION:
        return False
    llama = module.Llama
    llama.load_state = load_state  # type: ignore[method-assign]
    library = getattr(llama.logits_to_logprobs, "library", llama.logits_to_logprobs)
    llama.logits_to_logprobs = lazy_logprobs(library)  # type: ignore[method-assign]
    return True
