"""The vocabulary ranking the local server uses for token log-probabilities (:mod:`sgr.llm.fast_logprobs`) gives
what llama-cpp-python's own sort gives."""

from __future__ import annotations

import numpy as np
import pytest

from sgr.llm.fast_logprobs import MIN_VOCABULARY, VocabularyPairs, pairs, ranked, top_pairs


def _row(seed: int, n: int = 5000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    row = rng.normal(size=n).astype(np.float32)
    row[rng.choice(n, 40, replace=False)] = row[7]  # ties, some of them among the largest
    row[rng.choice(n, 5, replace=False)] = row.max()
    row[rng.choice(n, 5, replace=False)] = -np.inf
    return row


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 10, 60])
def test_the_k_largest_pairs_are_the_builtin_sorts_first_k(seed: int, k: int) -> None:
    row = _row(seed)
    expected = sorted(zip(row, range(len(row))), reverse=True)[:k]
    got = top_pairs(row, k)
    assert [(float(v), i) for v, i in got] == [(float(v), i) for v, i in expected]
    assert all(type(v) is type(e) for (v, _), (e, _) in zip(got, expected))  # the row's own items, not copies
    as_list = row.tolist()  # the streaming path ranks a list of floats
    assert top_pairs(as_list, k) == sorted(zip(as_list, range(len(as_list))), reverse=True)[:k]


def test_the_calling_completions_logprobs_sets_how_many() -> None:
    row = _row(3)

    def completion(logprobs):  # stands for llama_cpp.llama.Llama._create_completion's loop
        return list(ranked(pairs(row, range(len(row))), reverse=True))

    full = sorted(zip(row, range(len(row))), reverse=True)
    assert completion(4) == full[:4]
    assert completion(None) == full  # no integer logprobs: the whole row, as before
    assert completion(True) == full


def test_anything_else_goes_to_the_builtins() -> None:
    short = [3.0, 1.0, 2.0]
    assert list(pairs(short, range(3))) == [(3.0, 0), (1.0, 1), (2.0, 2)]
    assert not isinstance(pairs(short, range(3)), VocabularyPairs)
    row = _row(4, MIN_VOCABULARY)
    assert not isinstance(pairs(row, range(1, MIN_VOCABULARY + 1)), VocabularyPairs)
    assert not isinstance(pairs(row, list(range(MIN_VOCABULARY))), VocabularyPairs)
    assert list(pairs("ab", "cd", strict=True)) == [("a", "c"), ("b", "d")]
    def started(logprobs):  # a sort of pairs already partly read ranks what is left, all of it
        vocabulary = pairs(row, range(len(row)))
        assert isinstance(vocabulary, VocabularyPairs)
        return next(vocabulary), ranked(vocabulary, reverse=True)

    assert started(2) == ((row[0], 0), sorted(zip(row[1:], range(1, len(row))), reverse=True))
    assert ranked([2, 3, 1]) == [1, 2, 3]
    assert ranked([2, 3, 1], key=lambda v: -v) == [3, 2, 1]
