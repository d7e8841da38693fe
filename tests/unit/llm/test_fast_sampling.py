"""Which completions the local server's first-try grammar sampler (:mod:`sgr.llm.fast_sampling`) takes over: only
those whose llama-cpp-python sampler chain is ``penalties → grammar → greedy``. That it gives the chain's reply is
tested against the real model (``tests/e2e/llm/test_local_llm.py``)."""

from __future__ import annotations

import pytest

from sgr.llm.fast_sampling import TOKEN_DATA, covered


def test_greedy_completions_under_a_grammar_are_covered() -> None:
    assert covered({"grammar": object(), "temp": 0.0, "logits_processor": None, "repeat_penalty": 1.1})


@pytest.mark.parametrize("change", [{"grammar": None}, {"temp": 0.8}, {"temp": -1.0}, {"logits_processor": [len]}])
def test_every_other_chain_is_the_librarys(change: dict) -> None:
    kwargs = {"grammar": object(), "temp": 0.0, "logits_processor": None} | change
    assert not covered(kwargs)
    assert not covered({"grammar": object()})  # llama-cpp-python's default temperature is 0.8: sampled, not greedy


def test_token_data_has_llama_cpps_layout() -> None:
    """The numpy view of the candidates fills llama.cpp's structs: same size, same field offsets."""
    import ctypes

    llama_cpp = pytest.importorskip("llama_cpp")
    struct = llama_cpp.llama_token_data
    assert TOKEN_DATA.itemsize == ctypes.sizeof(struct)
    assert [TOKEN_DATA.fields[f][1] for f in ("id", "logit", "p")] == [getattr(struct, f).offset
                                                                      for f in ("id", "logit", "p")]
