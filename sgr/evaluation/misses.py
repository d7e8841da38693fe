"""Why a run misses: each scored question whose top answer is not gold, in the first class that holds.

    no answer   the method answered nothing (an error counts here)
    ranked      a gold answer is among the answers, not first; ``tied`` of them share the top answer's score, so
                the order inside the tie put the gold answer later (SGR orders a tie by name)
    path end    a gold answer ends one of the reasoning paths the method returned, but is not among its answers:
                a relation path it did not choose
    absent      no gold answer among the answers or at a path's end

``tied_hits`` counts the hits whose top answer shares its score with an answer that is not gold: ``tied`` and
``tied_hits`` together are the questions a tie decided. Answers and gold compare normalised
(:func:`sgr.core.text.normalize`), as the metrics compare them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from sgr.core.text import normalize, normalize_set

CLASSES = ("no_answer", "ranked", "path_end", "absent")
_SAME = 1e-9


@dataclass
class MissSummary:
    """The miss classes of a run's scored questions, with the first examples of each class."""

    n: int = 0
    misses: int = 0
    no_answer: int = 0
    ranked: int = 0
    tied: int = 0
    tied_hits: int = 0
    path_end: int = 0
    absent: int = 0
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {c: [] for c in CLASSES})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _scores(answers: list[dict[str, Any]]) -> list[float]:
    return [float(a.get("score") or 0.0) for a in answers]


def classify(record: dict[str, Any]) -> tuple[str, bool] | None:
    """``(class, tied)`` of a miss (module docstring); None for a hit or a question without gold answers."""
    gold = normalize_set(record.get("gold") or [])
    answers = record.get("answers") or []
    if not gold or (answers and normalize(answers[0].get("text")) in gold):
        return None
    if not answers:
        return "no_answer", False
    rank = next((i for i, a in enumerate(answers) if normalize(a.get("text")) in gold), None)
    if rank is not None:
        scores = _scores(answers)
        return "ranked", abs(scores[rank] - scores[0]) < _SAME
    ends = {normalize((p.get("names") or [None])[-1] or p["nodes"][-1])
            for p in record.get("paths") or [] if p.get("nodes")}
    return ("path_end" if ends & gold else "absent"), False


def tied_hit(record: dict[str, Any]) -> bool:
    """A hit whose top answer shares its score with an answer that is not gold."""
    gold = normalize_set(record.get("gold") or [])
    answers = record.get("answers") or []
    if not (gold and answers and normalize(answers[0].get("text")) in gold):
        return False
    scores = _scores(answers)
    return any(abs(s - scores[0]) < _SAME and normalize(a.get("text")) not in gold
               for a, s in zip(answers[1:], scores[1:]))


def example_text(example: dict[str, Any]) -> str:
    """One kept example as a line: the question → its top answers (gold: the first gold answers)."""
    return (f"{example['question']} → {', '.join(map(str, example['top'])) or '(none)'} "
            f"(gold: {', '.join(map(str, example['gold']))})")


def summarize_misses(records: Iterable[dict[str, Any]], n_examples: int = 3) -> MissSummary:
    """The :class:`MissSummary` of the records with gold answers, keeping ``n_examples`` examples per class."""
    out = MissSummary()
    for rec in records:
        if not rec.get("gold"):
            continue
        out.n += 1
        found = classify(rec)
        if found is None:
            out.tied_hits += tied_hit(rec)
            continue
        cls, tied = found
        out.misses += 1
        setattr(out, cls, getattr(out, cls) + 1)
        out.tied += tied
        if len(out.examples[cls]) < n_examples:
            out.examples[cls].append({"id": rec.get("id"), "question": rec.get("question"),
                                      "gold": list(rec["gold"][:3]),
                                      "top": [a.get("text") for a in (rec.get("answers") or [])[:3]],
                                      **({"tied": True} if tied else {})})
    return out
