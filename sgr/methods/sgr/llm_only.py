"""``llm-only``: the model answers from its parameters, one call, no graph (the answers carry no paths)."""

from __future__ import annotations

from typing import Any

from sgr.core.text import parse_answer_lines
from sgr.core.types import Answer, Prediction, Question
from sgr.methods.base import UsageMeter


class LLMOnlyAnswerer:
    """``llm-only``: the model answers from its parameters (no graph; the answers carry no paths)."""

    SYSTEM = "You answer questions about the world. Write the answers only, one per line. No other text."
    EXAMPLE = ("what does jamaican people speak?", "Jamaican English\nJamaican Creole English Language")

    def __init__(self, llm: Any, name: str = "llm-only") -> None:
        self.llm = llm
        self.meter = UsageMeter(None, llm)
        self.name = name

    def answer(self, question: Question) -> Prediction:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        msgs = [SystemMessage(self.SYSTEM), HumanMessage(f"Question: {self.EXAMPLE[0]}\nAnswers:"),
                AIMessage(self.EXAMPLE[1]), HumanMessage(f"Question: {question.text}\nAnswers:")]
        with self.meter.measure() as usage, self.meter.stage("answer"):
            text = self.llm.complete(msgs, stage="answer", max_tokens=60)
        answers = [Answer(text=line, score=1.0 / (i + 1)) for i, line in enumerate(parse_answer_lines(text)[:10])]
        return Prediction(question_id=question.id, answers=answers, usage=usage, method=self.name, route="llm",
                          extra={"generated_text": text, "llm_cached_calls": usage.llm_cached_calls})
