"""What relation retrievers learn from and are scored on: questions with the relations of their gold paths.

* WebQSP: ``webqsp_train_paths.jsonl`` (train) and the RoG-format slice's ``ground_paths`` (test);
* MetaQA: ``{1,2,3}hop_{dev,test}.tsv`` with the relation path of each question's type (``*_qtype.txt``);
* a fixed-seed validation split for model selection.

Used by both trainers (:mod:`sgr.retrieval.training`, the paper's heads; :mod:`sgr.retrieval.encoder_training`)
and by RRA@k evaluation (:func:`sgr.retrieval.relations.evaluate_retrieval`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sgr.core.errors import ConfigError, InputError
from sgr.datasets import metaqa_relation_path


@dataclass(frozen=True)
class RelationExample:
    """One question with the relations of its gold reasoning paths (the positives ``R_q⁺`` of eq. 2)."""

    id: str
    question: str
    paths: tuple[tuple[str, ...], ...]
    hops: int | None = None

    @property
    def relations(self) -> tuple[str, ...]:
        """Every relation on any gold path, in order of first appearance."""
        seen: dict[str, None] = {}
        for path in self.paths:
            for rel in path:
                seen.setdefault(rel, None)
        return tuple(seen)


def read_webqsp_paths(path: Path, limit: int | None = None) -> list[RelationExample]:
    """WebQSP questions with gold relation paths: ``webqsp_train_paths.jsonl`` or the RoG-format slice.

    Each line needs ``id``, ``question`` and ``ground_paths`` (a list of relation lists). Questions without any
    gold path are skipped (they cannot supervise or be scored by RRA).
    """
    out: list[RelationExample] = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    with fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            for key in ("id", "question", "ground_paths"):
                if key not in rec:
                    raise InputError(f"{path}:{lineno}: field {key!r} is missing")
            paths = rec["ground_paths"]
            if not isinstance(paths, list) or not all(isinstance(p, list) for p in paths):
                raise InputError(f"{path}:{lineno}: field 'ground_paths' must be a list of relation lists")
            paths_t = tuple(tuple(str(r) for r in p) for p in paths if p)
            if not paths_t:
                continue
            out.append(RelationExample(id=str(rec["id"]), question=str(rec["question"]), paths=paths_t,
                                       hops=max(len(p) for p in paths_t)))
            if limit is not None and len(out) >= limit:
                break
    return out


def metaqa_qtype_path(qtype: str) -> tuple[str, ...]:
    """The relation path of a MetaQA question type: ``actor_to_movie_to_director`` → ``(starred_actors, directed_by)``
    (:func:`sgr.datasets.metaqa_relation_path` without the directions: RRA ranks relation names)."""
    try:
        return tuple(rel for rel, _ in metaqa_relation_path(qtype))
    except ValueError as exc:
        raise InputError(f"MetaQA question type {qtype!r}: {exc}") from exc


_BRACKETS = re.compile(r"\[([^\]]*)\]")


def metaqa_question_text(raw: str) -> str:
    """MetaQA's question with the topic-entity brackets removed: ``movies starred by [X]`` → ``movies starred by X``."""
    return _BRACKETS.sub(r"\1", raw).strip()


def read_metaqa(data_dir: Path, split: str, hops: Sequence[int] = (1, 2, 3), limit_per_hop: int | None = None,
                seed: int = 0) -> list[RelationExample]:
    """MetaQA questions of ``split`` (``dev``/``test``) with their qtype relation path as the gold path.

    With ``limit_per_hop`` a fixed-seed sample (``random.Random(seed)``) of that many questions per hop is kept,
    in file order.
    """
    out: list[RelationExample] = []
    for hop in hops:
        qfile = data_dir / f"{hop}hop_{split}.tsv"
        tfile = data_dir / f"{hop}hop_{split}_qtype.txt"
        for f in (qfile, tfile):
            if not f.exists():
                raise InputError(f"{f}: MetaQA file not found (set --data to the folder with {{1,2,3}}hop_*.tsv)")
        questions = qfile.read_text(encoding="utf-8").splitlines()
        qtypes = tfile.read_text(encoding="utf-8").splitlines()
        if len(questions) != len(qtypes):
            raise InputError(f"{tfile}: {len(qtypes)} lines but {qfile.name} has {len(questions)}: files not aligned")
        idx = list(range(len(questions)))
        if limit_per_hop is not None and limit_per_hop < len(idx):
            idx = sorted(random.Random(seed).sample(idx, limit_per_hop))
        for i in idx:
            text = questions[i].split("\t", 1)[0]
            path = metaqa_qtype_path(qtypes[i])
            out.append(RelationExample(id=f"metaqa-{hop}hop-{split}-{i}", question=metaqa_question_text(text),
                                       paths=(path,), hops=hop))
    return out


def split_validation(examples: Sequence[RelationExample], fraction: float, seed: int = 0
                     ) -> tuple[list[RelationExample], list[RelationExample]]:
    """A fixed-seed (train, validation) split; ``fraction`` of the questions are held out."""
    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"validation fraction must be in (0, 1), got {fraction}")
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    n_val = max(1, int(round(len(examples) * fraction)))
    val_idx = set(order[:n_val])
    return ([e for i, e in enumerate(examples) if i not in val_idx],
            [e for i, e in enumerate(examples) if i in val_idx])


# -- the shared datasets (what `sgr relations train|eval` read)
TRAIN_DATASETS = ("webqsp", "metaqa")
EVAL_DATASETS = ("webqsp", "metaqa-1hop", "metaqa-2hop", "metaqa-3hop")


def _data_dir(data_dir: Path | None) -> Path:
    if data_dir is not None:
        return Path(data_dir).expanduser()
    from sgr.datasets import shared_data_dir

    return shared_data_dir()


def training_examples(dataset: str, data_dir: Path | None = None, limit: int | None = None,
                      seed: int = 0) -> list[RelationExample]:
    """Supervision for ``dataset``: WebQSP train questions with gold paths, or MetaQA dev (all hops).

    ``limit``: WebQSP — the first ``limit`` questions; MetaQA — a fixed-seed sample of ``limit`` per hop.
    """
    root = _data_dir(data_dir)
    if dataset == "webqsp":
        return read_webqsp_paths(root / "webqsp" / "webqsp_train_paths.jsonl", limit=limit)
    if dataset == "metaqa":
        return read_metaqa(root / "metaqa", "dev", (1, 2, 3), limit_per_hop=limit, seed=seed)
    raise ConfigError(f"unknown training set {dataset!r} (known: {', '.join(TRAIN_DATASETS)})")


def evaluation_examples(dataset: str, data_dir: Path | None = None, limit: int | None = None,
                        seed: int = 0) -> list[RelationExample]:
    """Test questions with gold paths: the WebQSP slice's ``ground_paths`` or MetaQA test of one hop count.

    ``limit``: a fixed-seed sample of that many questions (WebQSP: the first ``limit``).
    """
    root = _data_dir(data_dir)
    if dataset == "webqsp":
        return read_webqsp_paths(root / "webqsp" / "webqsp_mini.jsonl", limit=limit)
    m = re.fullmatch(r"metaqa-([123])hop", dataset)
    if m:
        return read_metaqa(root / "metaqa", "test", (int(m.group(1)),), limit_per_hop=limit, seed=seed)
    raise ConfigError(f"unknown evaluation set {dataset!r} (known: {', '.join(EVAL_DATASETS)})")

