"""``scr+llm``: the paper's prompt (Figure 2) and the parsing of the LLM's answer lines."""

from __future__ import annotations

import pytest

from sgr.core.errors import ConfigError
from sgr.core.text import parse_answer_lines
from sgr.core.types import ReasoningPath
from sgr.methods.base import MethodContext
from sgr.methods.scr.method import build_prompt, create_scr, create_scr_greedy, render_path


def _paths() -> list[ReasoningPath]:
    return [ReasoningPath(nodes=["Austria", "Vienna"], relations=["country.capital"], score=0.8,
                          names=["Austria", "Vienna"], directions=["out"]),
            ReasoningPath(nodes=["Austria", "m.0x", "Graz"], relations=["a.b", "c.d"], score=0.1,
                          names=["Austria", None, "Graz"], directions=["out", "in"])]


def test_prompt_follows_figure_2() -> None:
    prompt = build_prompt("What is the capital of Austria?", _paths())
    assert prompt.startswith("# Reasoning Paths:\nAustria → country.capital → Vienna (hypothesis answer: Vienna)\n")
    assert "Austria → a.b → m.0x → c.d (reverse) → Graz (hypothesis answer: Graz)" in prompt
    assert "\n\n# Question:\nWhat is the capital of Austria?\n\n" in prompt
    assert prompt.endswith("Please return only the answers, with each answer on a new line.")
    assert render_path(_paths()[0]) == "Austria → country.capital → Vienna"


def test_answer_lines_are_parsed() -> None:
    assert parse_answer_lines("Vienna\n- Graz\n2. vienna\n\n  Linz ") == ["Vienna", "Graz", "Linz"]
    assert parse_answer_lines("") == []


def test_scr_options_are_typed_and_an_unknown_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="scr: unknown option 'beem'; valid options: .*beam"):
        create_scr(MethodContext(store=None, options={"beem": 3}))
    with pytest.raises(ConfigError, match="min_prob"):
        create_scr_greedy(MethodContext(store=None, options={"min_prob": "high"}))


def test_llm_answer_with_scripted_chat_model() -> None:
    from tests.helpers import scripted_llm
    from sgr.methods.scr.method import SCRAnswerer
    from sgr.core.types import Answer, Prediction, Question

    llm = scripted_llm("Vienna\nSalzburg")
    paths = _paths()
    pred = Prediction(question_id="q1", answers=[Answer("Vienna", "Vienna", 0.8, [paths[0]]),
                                                 Answer("Graz", "Graz", 0.1, [paths[1]])], paths=paths)
    answerer = SCRAnswerer.__new__(SCRAnswerer)  # only the LLM stage is exercised here
    answerer.llm = llm
    answerer._llm_answer(pred, Question(id="q1", text="What is the capital of Austria?"))
    assert [a.text for a in pred.answers] == ["Vienna", "Salzburg"]
    assert pred.answers[0].paths == [paths[0]] and pred.answers[0].id == "Vienna"  # grounded hypothesis kept
    assert pred.answers[1].id is None and pred.answers[1].paths == []  # an answer from outside the paths
    assert pred.usage.llm_calls == 1 and pred.extra["hypotheses"] == ["Vienna", "Graz"]


def test_llm_reads_the_paths_with_the_real_local_model(local_llm) -> None:
    from langchain_core.messages import HumanMessage

    text = local_llm.complete([HumanMessage(content=build_prompt("What is the capital of Austria?", _paths()[:1]))],
                              stage="scr_answer", max_tokens=32)
    lines = parse_answer_lines(text)
    assert lines, text
    assert any("vienna" in line.lower() for line in lines), text
