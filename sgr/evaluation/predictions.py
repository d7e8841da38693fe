"""``predictions.jsonl``: the streamed, resumable record of a run, one JSON object per line.

Each line is written whole and flushed (and fsynced every ``sync_every`` lines), so a run killed at
any moment leaves a file whose complete lines are valid. On reopening, a trailing partial line (a
write cut short) is cut off before anything is appended, so the file stays one object per line.
When an id occurs more than once (a question retried with ``--retry-errors``), the last line wins.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sgr.evaluation.metrics.scores import QuestionScores, score_answers
from sgr.core.types import Prediction, Question

PATHS_KEPT = 10  # reasoning paths kept per question in the file


def read_predictions(path: Path) -> dict[str, dict[str, Any]]:
    """``{question id: record}`` from complete lines; undecodable lines are skipped, last line per id wins."""
    records: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return records
    with open(path, "rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a partial last line
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict) and "id" in rec:
                records[str(rec["id"])] = rec
    return records


def repair_tail(path: Path) -> int:
    """Cut a partial (unterminated) last line off ``path``; returns the number of bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # scan back to the last newline
        pos, block = size, 65536
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                break
            pos = start
        fh.truncate(keep)
        return size - keep


class PredictionLog:
    """Append-only writer of prediction records (one process writes; use from one thread)."""

    def __init__(self, path: Path, sync_every: int = 50) -> None:
        self.path = path
        repair_tail(path)
        self._fh = open(path, "a", encoding="utf-8")
        self._sync_every = sync_every
        self._since_sync = 0

    def append(self, record: dict[str, Any]) -> None:
        self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()
        self._since_sync += 1
        if self._since_sync >= self._sync_every:
            os.fsync(self._fh.fileno())
            self._since_sync = 0

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> "PredictionLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def prediction_record(question: Question, prediction: Prediction | None, error: str | None) -> dict[str, Any]:
    """The line written for one question: its answers, paths, usage (the method's own; ``{}`` when it
    raised), error, gold answers and scores."""
    answers = [{"text": a.text, "id": a.id, "score": a.score} for a in (prediction.answers if prediction else [])]
    texts = [a["text"] for a in answers]
    rec: dict[str, Any] = {
        "id": question.id,
        "question": question.text,
        "topic_entities": question.topic_entities,
        "hops": question.hops,
        "qtype": question.qtype,
        "gold": question.answers,
        "answers": answers,
        "paths": [asdict(p) for p in (prediction.paths[:PATHS_KEPT] if prediction else [])],
        "usage": asdict(prediction.usage) if prediction else {},
        "error": error if error is not None else (prediction.error if prediction else None),
        "method": prediction.method if prediction else None,
        "route": prediction.route if prediction else None,
        "cypher": prediction.cypher if prediction else [],
        "extra": prediction.extra if prediction else {},
        "confidence": prediction.confidence if prediction else None,
    }
    rec["scores"] = score_answers(texts, question.answers).as_dict() if question.answers else None
    return rec


def record_scores(rec: dict[str, Any]) -> QuestionScores | None:
    """Score a record from its answers and gold answers (recomputed, so metric fixes apply to old runs);
    ``None`` when the question has no gold answer."""
    gold = rec.get("gold") or []
    if not gold:
        return None
    return score_answers([a.get("text") or "" for a in rec.get("answers") or []], gold)
