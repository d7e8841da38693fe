"""PRP-RM (sgr/llm/verify.py): the KG-RAR score formula, SGR's verification prompt, the prior fallback, and the
real Yes/No call."""

from __future__ import annotations

import math

import pytest
from sgr.llm.verify import PRIOR_SCORE, path_confidence, prp_score, verification_messages
from tests.helpers import scripted_llm


def test_prp_score_is_the_kg_rar_formula() -> None:
    for lp_yes, lp_no in [(-0.37, -3.42), (-3.42, -0.37), (-1.0, -1.0), (-0.01, -12.0), (-700.0, -0.5)]:
        expected = math.exp(lp_yes) / (math.exp(lp_yes) + math.exp(lp_no))
        assert prp_score(lp_yes, lp_no) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert prp_score(-1.0, -1.0) == 0.5
    assert prp_score(-0.1, -2.0) > 0.5 > prp_score(-2.0, -0.1)
    # stable far from 0 and at the edges
    assert prp_score(-1e6, 0.0) == pytest.approx(0.0, abs=1e-300)
    assert prp_score(0.0, -1e6) == 1.0
    assert prp_score(-math.inf, -0.2) == 0.0 and prp_score(-0.2, -math.inf) == 1.0
    assert prp_score(-math.inf, -math.inf) == PRIOR_SCORE
    with pytest.raises(ValueError):
        prp_score(float("nan"), -1.0)


def test_the_prompt_carries_the_question_the_schema_and_the_path() -> None:
    msgs = verification_messages("who directed Heat?", "Heat -[directed_by]-> Michael Mann", "directed_by")
    assert [type(m).__name__ for m in msgs] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage",
                                                "AIMessage", "HumanMessage"]
    assert [m.content for m in msgs[2:5:2]] == ["Yes", "No"]
    text = msgs[-1].content
    assert "who directed Heat?" in text and "Path: Heat -[directed_by]-> Michael Mann" in text
    assert "Query schema: directed_by" in text and text.rstrip().endswith("Answer Yes or No.")
    assert "Query schema" not in verification_messages("q", "p")[-1].content


def test_a_model_without_logprobs_gives_the_fixed_prior() -> None:
    llm = scripted_llm("Yes", logprobs=False)
    v = path_confidence(llm, "who directed Heat?", "Heat -[directed_by]-> Michael Mann")
    assert v.score == PRIOR_SCORE and v.source == "prior" and not v.measured
    assert path_confidence(llm, "q", "p", prior=0.3).score == 0.3
    assert path_confidence(None, "q", "p").source == "prior"
    # a chat model that claims logprobs but returns none also falls back to the prior
    llm = scripted_llm("Yes", logprobs=True)
    assert path_confidence(llm, "q", "p").source == "prior"


def test_yes_no_call_against_the_real_local_model(local_llm) -> None:
    good = path_confidence(local_llm, "What is the capital of Austria?", "Austria -[location.country.capital]-> Vienna")
    assert good.source == "logprobs" and good.measured
    assert good.logp_yes is not None and good.logp_no is not None
    assert good.logp_yes <= 0.0 and good.logp_no <= 0.0
    assert 0.0 < good.score < 1.0
    assert good.score == pytest.approx(prp_score(good.logp_yes, good.logp_no))
    other = path_confidence(local_llm, "What is the capital of Austria?",
                            "Austria -[location.location.containedby]-> Europe")
    assert other.measured and other.score != good.score  # the path reaches the score
