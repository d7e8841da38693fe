"""PRP-RM (sgr/verify.py): the KG-RAR score formula, the prior fallback, and the real Yes/No call."""

from __future__ import annotations

import math

import pytest
from sgr.llm.verify import (PRIOR_SCORE, answer_messages, prp_score, step_messages, verify_answer, verify_step)
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


def test_prompts_carry_the_question_the_claim_and_the_facts() -> None:
    msgs = step_messages("who directed Heat?", "Heat -[directed_by]-> Michael Mann",
                         evidence=["Heat directed_by Michael Mann"], previous_steps=["found the film Heat"])
    text = msgs[-1].content
    assert "who directed Heat?" in text and "Heat -[directed_by]-> Michael Mann" in text
    assert "Heat directed_by Michael Mann" in text and "found the film Heat" in text
    assert text.rstrip().endswith("Answer Yes or No.")
    msgs = answer_messages("who directed Heat?", "Michael Mann", ["Heat directed_by Michael Mann"], schema="directed_by")
    assert "Proposed answer: Michael Mann" in msgs[-1].content and "Query schema: directed_by" in msgs[-1].content


def test_a_model_without_logprobs_gives_the_fixed_prior() -> None:
    llm = scripted_llm("Yes", logprobs=False)
    v = verify_answer(llm, "who directed Heat?", "Michael Mann")
    assert v.score == PRIOR_SCORE and v.source == "prior" and not v.measured
    v = verify_step(llm, "who directed Heat?", "Heat -[directed_by]-> Michael Mann", prior=0.3)
    assert v.score == 0.3 and v.source == "prior"
    # a chat model that claims logprobs but returns none also falls back to the prior
    llm = scripted_llm("Yes", logprobs=True)
    assert verify_answer(llm, "q", "a").source == "prior"


def test_yes_no_call_against_the_real_local_model(local_llm) -> None:
    v = verify_answer(local_llm, "What is the capital of Austria?", "Vienna",
                      evidence=["Austria -[location.country.capital]-> Vienna"])
    assert v.source == "logprobs" and v.measured
    assert v.logp_yes is not None and v.logp_no is not None
    assert v.logp_yes <= 0.0 and v.logp_no <= 0.0
    assert 0.0 < v.score < 1.0
    assert v.score == pytest.approx(prp_score(v.logp_yes, v.logp_no))
    s = verify_step(local_llm, "Who directed Heat?", "Heat -[film.film.directed_by]-> Michael Mann",
                    evidence=["Heat -[film.film.directed_by]-> Michael Mann"])
    assert s.source == "logprobs" and 0.0 < s.score < 1.0
