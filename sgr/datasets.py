"""Readers for KGQA datasets; each yields :class:`sgr.core.types.Question` objects.

Formats (detected from the file name and the records):

* **MetaQA** (Zhang et al. 2018): ``question with [topic entity]<TAB>answer1|answer2`` in
  ``{1,2,3}hop_{dev,test}.tsv``. The hop count comes from the file name; the line-aligned
  ``*_qtype.txt`` gives the relation-path type (``actor_to_movie_to_director``), which becomes the
  question's ``qtype`` and its gold relation path with directions (:func:`metaqa_relation_path`).
  The brackets are removed from the question text (the raw line stays in ``extra["raw"]``).
* **RoG-style records** (JSONL, JSON list or Parquet; Luo et al. 2024): ``id, question, answer,
  q_entity, q_entity_mid, a_entity, ground_paths, graph`` (``graph`` is not kept), optional ``type``.
* **Plain JSONL** for users' own sets: ``{id, question, answers, topic_entities}``, optional
  ``hops``, ``type``, ``gold_paths``, ``topic_mids``.

Named datasets resolve under the shared data folder (``SGR_SHARED_DATA``, default
``<repo>/../shared/data``): ``metaqa-1hop``, ``metaqa-2hop``, ``metaqa-3hop`` (splits ``test``,
``dev``), ``webqsp`` (split ``test``) and ``cwq`` (split ``dev``: Complex WebQuestions' dev split, whose
graph is loaded beside the WebQSP slice's).

Selection: ``sample=N, seed=S`` draws N questions uniformly without replacement
(``random.Random(S).sample``) and keeps them in file order; ``limit=N`` then keeps the first N.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sgr.core.config import shared_data_dir  # re-exported: callers import it from here too
from sgr.core.errors import InputError
from sgr.core.types import Question

#: MetaQA's entity types in qtype strings → the KB relation whose tail has that type (heads are movies).
METAQA_TYPE_RELATIONS: dict[str, str] = {
    "director": "directed_by",
    "writer": "written_by",
    "actor": "starred_actors",
    "year": "release_year",
    "language": "in_language",
    "tag": "has_tags",
    "tags": "has_tags",
    "genre": "has_genre",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}

NAMED_DATASETS: dict[str, dict[str, str]] = {
    "metaqa-1hop": {"test": "metaqa/1hop_test.tsv", "dev": "metaqa/1hop_dev.tsv"},
    "metaqa-2hop": {"test": "metaqa/2hop_test.tsv", "dev": "metaqa/2hop_dev.tsv"},
    "metaqa-3hop": {"test": "metaqa/3hop_test.tsv", "dev": "metaqa/3hop_dev.tsv"},
    "webqsp": {"test": "webqsp/webqsp_mini.jsonl"},
    "cwq": {"dev": "cwq/cwq_dev.jsonl"},  # Complex WebQuestions, the dev split (its graph: load it beside WebQSP's)
}

_BRACKET = re.compile(r"\[([^\]]+)\]")
_SPLIT_IN_NAME = re.compile(r"(?<=[_\-.])(train|dev|valid|validation|test)(?=[_\-.])")


@dataclass
class Dataset:
    """Questions read from one file, after sampling/limit; ``total`` counts them before selection."""

    name: str
    path: Path
    format: str  # "metaqa" | "rog" | "jsonl"
    questions: list[Question]
    total: int
    split: str | None = None
    selection: dict[str, Any] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """Hash of the selected question ids (a resumed run must see the same selection)."""
        h = hashlib.sha256("\n".join(q.id for q in self.questions).encode())
        return h.hexdigest()[:16]


def metaqa_relation_path(qtype: str) -> list[tuple[str, str]]:
    """``actor_to_movie_to_director`` → ``[("starred_actors", "in"), ("directed_by", "out")]``.

    In the MetaQA KB every triple's head is a movie, so a step *from* a movie to type X walks X's
    relation forwards (``out``) and a step from X *to* a movie walks it backwards (``in``).
    """
    types = qtype.strip().split("_to_")
    if len(types) < 2:
        raise ValueError(f"not a MetaQA relation-path type: {qtype!r}")
    path = []
    for a, b in zip(types, types[1:]):
        if a == "movie" and b in METAQA_TYPE_RELATIONS:
            path.append((METAQA_TYPE_RELATIONS[b], "out"))
        elif b == "movie" and a in METAQA_TYPE_RELATIONS:
            path.append((METAQA_TYPE_RELATIONS[a], "in"))
        else:
            raise ValueError(f"not a MetaQA relation-path type: {qtype!r} (step {a}_to_{b})")
    return path


def resolve_dataset_path(spec: str, split: str | None = None) -> tuple[str, Path, str | None]:
    """``(name, path, split)`` for a named dataset or a file path."""
    if spec in NAMED_DATASETS:
        splits = NAMED_DATASETS[spec]
        use = split or ("test" if "test" in splits else next(iter(splits)))
        if use not in splits:
            raise InputError(f"dataset {spec} has no split {use!r}; splits: {', '.join(splits)}")
        path = shared_data_dir() / splits[use]
        if not path.exists():
            raise InputError(f"{path}: not found (dataset {spec}); set SGR_SHARED_DATA to the shared data folder")
        return spec, path, use
    path = Path(spec).expanduser()
    file_split = None
    m = _SPLIT_IN_NAME.search(path.name)
    if m:
        file_split = m.group(1)
    if split and path.suffix == ".tsv" and file_split and split != file_split:
        other = path.with_name(path.name[:m.start()] + split + path.name[m.end():])  # type: ignore[union-attr]
        if not other.exists():
            raise InputError(f"{other}: not found (split {split!r} of {path.name})")
        path, file_split = other, split
    if not path.exists():
        raise InputError(f"{path}: no such dataset file (or name one of: {', '.join(NAMED_DATASETS)})")
    return path.stem, path, split or file_split


def load_dataset(spec: str, split: str | None = None, limit: int | None = None,
                 sample: int | None = None, seed: int = 0) -> Dataset:
    """Read a dataset (name or path), then apply ``sample``/``seed`` and ``limit``."""
    name, path, use_split = resolve_dataset_path(spec, split)
    if path.suffix == ".tsv":
        fmt, questions = "metaqa", read_metaqa(path)
    else:
        fmt, questions = read_records(path, split=split)
    total = len(questions)
    selection: dict[str, Any] = {}
    if sample is not None:
        if sample < 1:
            raise InputError(f"--sample must be positive, got {sample}")
        idx = sorted(random.Random(seed).sample(range(total), min(sample, total)))
        questions = [questions[i] for i in idx]
        selection.update(sample=sample, seed=seed)
    if limit is not None:
        if limit < 1:
            raise InputError(f"--limit must be positive, got {limit}")
        questions = questions[:limit]
        selection["limit"] = limit
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise InputError(f"{path}: question id {q.id!r} occurs twice; ids must be unique")
        seen.add(q.id)
    return Dataset(name=name, path=path, format=fmt, questions=questions, total=total,
                   split=use_split, selection=selection)


# -- MetaQA ----------------------------------------------------------------------------------
def read_metaqa(path: Path) -> list[Question]:
    """Read a MetaQA question file (and its ``_qtype.txt`` when present)."""
    m = re.search(r"([123])hop", path.name)
    hops = int(m.group(1)) if m else None
    qtype_file = path.with_name(path.stem + "_qtype.txt")
    qtypes = qtype_file.read_text(encoding="utf-8").splitlines() if qtype_file.exists() else None
    out: list[Question] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if "\t" not in line:
                raise InputError(f"{path}:{lineno}: expected 'question<TAB>answer|answer', found no tab")
            text, answers = line.split("\t", 1)
            topics = _BRACKET.findall(text)
            if not topics:
                raise InputError(f"{path}:{lineno}: question has no [topic entity] in brackets")
            qtype = None
            gold_paths: list[list[str]] = []
            extra: dict[str, Any] = {"raw": text, "line": lineno}
            if qtypes is not None:
                if lineno > len(qtypes):
                    raise InputError(f"{qtype_file}: has {len(qtypes)} lines, {path.name} has more questions")
                qtype = qtypes[lineno - 1].strip() or None
                if qtype:
                    try:
                        rel_path = metaqa_relation_path(qtype)
                    except ValueError as exc:
                        raise InputError(f"{qtype_file}:{lineno}: {exc}") from exc
                    gold_paths = [[r for r, _ in rel_path]]
                    extra["gold_directions"] = [[d for _, d in rel_path]]
            out.append(Question(
                id=f"{path.stem}:{lineno}", text=_BRACKET.sub(r"\1", text).strip(),
                topic_entities=topics, answers=[a for a in answers.split("|") if a.strip()],
                hops=hops, qtype=qtype, gold_paths=gold_paths, extra=extra))
    return out


# -- records (RoG-style or plain) -----------------------------------------------------------
def _iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = "".join(path.suffixes[-1:]).lower()
    if suffix == ".parquet":
        import pandas as pd

        frame = pd.read_parquet(path)
        for i, rec in enumerate(frame.to_dict(orient="records"), 1):
            yield i, _plain(rec)
    elif suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a JSON list of question records")
        for i, rec in enumerate(data, 1):
            yield i, rec
    else:
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield i, json.loads(line)
                except ValueError as exc:
                    raise InputError(f"{path}:{i}: not a JSON object ({exc.__class__.__name__}: {exc})") from exc


def _plain(value: Any) -> Any:
    """numpy arrays/scalars from Parquet → lists and Python scalars."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _str_list(value: Any, where: str, fld: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise InputError(f"{where}: field {fld!r} must be a list of strings or a string")
    return [str(v) for v in value if v is not None and str(v).strip()]


def record_to_question(rec: Any, where: str) -> Question:
    """One RoG-style or plain record → :class:`Question` (``where`` is ``file:line`` for errors)."""
    if not isinstance(rec, dict):
        raise InputError(f"{where}: expected a JSON object")
    if "question" not in rec or not str(rec["question"]).strip():
        raise InputError(f"{where}: field 'question' is missing or empty")
    qid = rec.get("id", rec.get("qid"))
    if qid is None or str(qid) == "":
        raise InputError(f"{where}: field 'id' is missing")
    if "answers" in rec or "topic_entities" in rec:  # plain format
        answers = _str_list(rec.get("answers"), where, "answers")
        topics = _str_list(rec.get("topic_entities"), where, "topic_entities")
        mids = _str_list(rec.get("topic_mids"), where, "topic_mids")
        paths = rec.get("gold_paths") or []
    else:  # RoG-style
        answers = _str_list(rec.get("answer"), where, "answer") or _str_list(rec.get("a_entity"), where, "a_entity")
        topics = _str_list(rec.get("q_entity"), where, "q_entity")
        mids = _str_list(rec.get("q_entity_mid"), where, "q_entity_mid")
        paths = rec.get("ground_paths") or []
    if not isinstance(paths, list) or not all(isinstance(p, list) for p in paths):
        raise InputError(f"{where}: gold paths must be a list of lists of relation names")
    hops = rec.get("hops")
    if hops is not None and not isinstance(hops, int):
        raise InputError(f"{where}: field 'hops' must be an integer")
    qtype = rec.get("type", rec.get("qtype"))
    return Question(id=str(qid), text=str(rec["question"]).strip(), topic_entities=topics, answers=answers,
                    hops=hops, qtype=str(qtype) if qtype is not None else None,
                    gold_paths=[[str(r) for r in p] for p in paths if p], topic_mids=mids)


def read_records(path: Path, split: str | None = None) -> tuple[str, list[Question]]:
    """Read RoG-style or plain records; ``split`` keeps records whose ``split`` field equals it."""
    fmt = None
    out: list[Question] = []
    has_split_field = False
    for i, rec in _iter_records(path):
        where = f"{path}:{i}"
        if isinstance(rec, dict) and "split" in rec:
            has_split_field = True
            if split and str(rec["split"]) != split:
                continue
        q = record_to_question(rec, where)
        if fmt is None:
            fmt = "jsonl" if ("answers" in rec or "topic_entities" in rec) else "rog"
        out.append(q)
    if split and not has_split_field:
        m = _SPLIT_IN_NAME.search(path.name)
        if not (m and m.group(1) == split):
            raise InputError(f"{path}: records have no 'split' field, cannot select split {split!r}")
    return fmt or "jsonl", out
