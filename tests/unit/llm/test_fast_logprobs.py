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


def _library_logprobs(logits, axis=-1):  # llama-cpp-python 0.3.36's Llama.logits_to_logprobs, for comparison
    maxs = np.amax(logits, axis=axis, keepdims=True)
    if maxs.ndim > 0:
        maxs[~np.isfinite(maxs)] = 0
    elif not np.isfinite(maxs):
        maxs = 0
    shifted = np.subtract(logits, maxs, dtype=np.single)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def test_lazy_logprobs_of_a_slice_are_the_librarys_rows() -> None:
    from sgr.llm.fast_logprobs import LazyLogprobs, lazy_logprobs

    scores = np.stack([_row(s, 2000) for s in range(6)])
    scores[1] = -np.inf  # a row without any finite logit: the library's own rule for it applies
    full = _library_logprobs(scores)
    convert = lazy_logprobs(_library_logprobs).__func__
    lazy = convert(scores)
    assert isinstance(lazy, LazyLogprobs) and len(lazy) == 6
    for start in (0, 1, 4, 6):
        np.testing.assert_array_equal(lazy[start:], full[start:])
    np.testing.assert_array_equal(np.asarray(lazy), full)
    np.testing.assert_array_equal(np.array(lazy.tolist()), full)  # the -inf row is NaN in both
    assert lazy.shape == full.shape
    np.testing.assert_array_equal(lazy[2], full[2])
    row = scores[3]
    assert isinstance(convert(row), np.ndarray)  # one row (the streaming path): the library's own result
    np.testing.assert_array_equal(convert(row), _library_logprobs(row))


def test_lazy_logprobs_compute_only_the_rows_sliced() -> None:
    from sgr.llm.fast_logprobs import lazy_logprobs

    seen = []

    def library(logits, axis=-1):
        seen.append(len(logits))
        return _library_logprobs(logits, axis)

    lazy = lazy_logprobs(library).__func__(np.stack([_row(s, 2000) for s in range(50)]))
    assert seen == []
    lazy[47:]
    assert seen == [3]
