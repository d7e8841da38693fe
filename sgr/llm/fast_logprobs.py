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

``python -m sgr.llm.fast_logprobs ARGS`` is ``python -m llama_cpp.server ARGS`` with it installed; that is how
:func:`sgr.llm.server.launch` starts the local server.
"""

from __future__ import annotations

import builtins
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


def install() -> None:
    """Use :func:`pairs` and :func:`ranked` inside ``llama_cpp.llama`` (idempotent)."""
    import llama_cpp.llama as module

    module.zip = pairs  # type: ignore[attr-defined]
    module.sorted = ranked  # type: ignore[attr-defined]


def main() -> None:
    install()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
