"""What relation retrievers learn from and are scored on: questions with the relations of their gold paths.

* WebQSP: ``webqsp_train_paths.jsonl`` (train) and the RoG-format slice's ``ground_paths`` (test);
* MetaQA: ``{1,2,3}hop_{dev,test}.tsv`` with the relation path of each question's type (``*_qtype.txt``);
* CWQ dev (``cwq_dev.jsonl``): only the questions built on a WebQSP *train* question (base id ``WebQTrn-*``), their
  topic→answer relation paths computed in Neo4j (:func:`graph_paths`), split by base question into a training part
  and a held-back part for model selection (:func:`cwq_dev_examples`);
* a fixed-seed validation split for model selection.

Used by both trainers (:mod:`sgr.retrieval.training`, the paper's heads; :mod:`sgr.retrieval.encoder_training`)
and by RRA@k evaluation (:func:`sgr.retrieval.relations.evaluate_retrieval`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from sgr.core.errors import ConfigError, InputError
from sgr.core.lexicon import NOISE_RELATIONS
from sgr.datasets import metaqa_relation_path
from sgr.graph.store import GraphStore


@dataclass(frozen=True)
class RelationExample:
    """One question with the relations of its gold reasoning paths (the positives ``R_q⁺`` of eq. 2)."""

    id: str
    question: str
    paths: tuple[tuple[str, ...], ...]
    hops: int | None = None
    topics: tuple[str, ...] = ()  # the topic entities' names, when known (the schema prompt's ``Topic:`` line)

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



# -- topic→answer relation paths in Neo4j (user datasets, CWQ dev)
def clean_paths(paths: Sequence[Sequence[str]], max_paths: int) -> list[list[str]]:
    """Gold paths without noise relations or duplicates, at most ``max_paths``, order kept."""
    out: list[list[str]] = []
    for p in paths:
        p = [str(r) for r in p if str(r).strip()]
        if p and not any(r in NOISE_RELATIONS for r in p) and p not in out:
            out.append(p)
    return out[:max_paths]


_PATHS_QUERY = """
MATCH (t:Entity) WHERE t.name = $topic OR t.id = $topic
MATCH (a:Entity) WHERE a.name IN $answers AND a <> t
MATCH p = allShortestPaths((t)-[*..%d]-(a))
WHERE none(x IN nodes(p)[1..-1] WHERE x.name IS NULL AND NOT x:CVT)
  AND size([x IN nodes(p)[1..-1] WHERE NOT x:CVT]) < $max_hops
RETURN [r IN relationships(p) | type(r)] AS rels, length(p) AS len
LIMIT $limit
"""


def graph_paths(store: GraphStore, topic: str, answers: Sequence[str], max_hops: int = 2,
                max_paths: int = 3, timeout_s: float | None = None) -> list[list[str]]:
    """The topic→answer shortest relation paths in the store, CVT-aware (a CVT does not count as a hop, so a path
    may have up to ``2·max_hops`` relationships), most frequent first (ties: shorter, then alphabetical).
    ``timeout_s``: give up (no paths) when the search takes longer — a deep search between hubs can run for
    minutes."""
    from sgr.core.errors import CypherError

    if not answers:
        return []
    params = {"topic": topic, "answers": list(answers), "max_hops": max_hops, "limit": 500}
    if timeout_s is None:
        rows = store.read(_PATHS_QUERY % (2 * max_hops), params)
    else:
        try:
            rows = store.run_generated(_PATHS_QUERY % (2 * max_hops), params, timeout_s=timeout_s, row_cap=500).rows
        except CypherError:
            return []
    counts: dict[tuple[str, ...], int] = {}
    for r in rows:
        key = tuple(x for x in r["rels"] if not x.startswith("SGR_"))
        if key:
            counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts, key=lambda k: (-counts[k], len(k), k))
    return clean_paths([list(k) for k in ranked], max_paths)


def question_paths(store: GraphStore, topics: Sequence[str], answers: Sequence[str], max_hops: int = 2,
                   max_paths: int = 3, deepen_timeout_s: float = 10.0) -> list[list[str]]:
    """:func:`graph_paths` from each topic entity in turn, duplicates dropped, at most ``max_paths``. Beyond two hops
    the search deepens one hop at a time, only while nothing is found, each deeper search given up after
    ``deepen_timeout_s`` (shortest paths found at two hops are the ones a deeper search would return)."""
    paths: list[list[str]] = []
    for hops in range(min(2, max_hops), max_hops + 1):
        for topic in topics:
            found = graph_paths(store, topic, answers, max_hops=hops, max_paths=max_paths,
                                timeout_s=3 * deepen_timeout_s if hops <= 2 else deepen_timeout_s)
            paths += [p for p in found if p not in paths]
        if paths:
            break
    return paths[:max_paths]


# -- which node a question's gold paths start from (WebQSP train: paths known, topics not)
#: The longest gold path :func:`path_starts` walks (WebQSP train's paths are one to four relations).
MAX_START_PATH = 4


def _walk(length: int, relation: str) -> tuple[str, str]:
    """The pattern of a ``length``-step walk from ``(e)``, each edge either way (``-[r0]-(m0)-[r1]-(m1)…``), and the
    condition that its relations are ``relation[0]``, ``relation[1]``, … (a Cypher list expression)."""
    walk = "".join(f"-[r{k}]-(m{k})" for k in range(length))
    return walk, " AND ".join(f"type(r{k}) = {relation}[{k}]" for k in range(length))


def path_starts(store: GraphStore, ids: Sequence[str], paths: Sequence[Sequence[str]]) -> dict[str, int]:
    """How many of ``paths`` (relation-type sequences) can be walked in the store from each node of ``ids``, each
    edge either way (RoG's gold paths are shortest paths of the undirected graph): ``{id: count}`` for the nodes
    that start one or more. Paths longer than :data:`MAX_START_PATH` are not walked; one batched read per length."""
    found: dict[str, int] = {}
    wanted = [list(p) for p in dict.fromkeys(tuple(p) for p in paths) if 0 < len(p) <= MAX_START_PATH]
    for length in sorted({len(p) for p in wanted}):
        rows = [{"id": i, "p": p} for i in dict.fromkeys(ids) for p in wanted if len(p) == length]
        walk, same = _walk(length, "row.p")
        for r in store.read(f"UNWIND $rows AS row MATCH (e:Entity {{id: row.id}}) "
                            f"WHERE EXISTS {{ MATCH (e){walk} WHERE {same} }} RETURN row.id AS id", {"rows": rows}):
            found[r["id"]] = found.get(r["id"], 0) + 1
    return found


def path_ends(store: GraphStore, start: str, paths: Sequence[Sequence[str]], cap: int = 200
              ) -> dict[str, tuple[str, int]]:
    """The named non-CVT nodes each of ``paths`` reaches from the node ``start``, walked as :func:`path_starts`
    walks them (at most ``cap`` a path): ``{id: (name, how many of the paths reach it)}``."""
    found: dict[str, tuple[str, int]] = {}
    for p in paths:
        walk, same = _walk(len(p), "$p")
        end = f"m{len(p) - 1}"
        for r in store.read(f"MATCH (e:Entity {{id: $start}}){walk} WHERE {same} AND {end} <> e AND NOT {end}:CVT "
                            f"AND {end}.name IS NOT NULL RETURN DISTINCT {end}.id AS id, {end}.name AS name "
                            "LIMIT $cap", {"start": start, "p": list(p), "cap": cap}):
            found[r["id"]] = (r["name"], found.get(r["id"], ("", 0))[1] + 1)
    return found


def topic_from_paths(starts: dict[str, int]) -> str | None:
    """The one node that starts the most gold paths (:func:`path_starts`); None when none does or two tie."""
    if not starts:
        return None
    best = max(starts.values())
    top = [i for i, n in starts.items() if n == best]
    return top[0] if len(top) == 1 else None


# -- CWQ dev: the questions built on WebQSP train questions, split by base question
#: The prefix of a WebQSP *train* question id; CWQ questions built on one carry it as their base id.
WEBQSP_TRAIN_PREFIX = "WebQTrn-"


def base_question(qid: str) -> str:
    """The WebQSP question a CWQ question was built on: the id before ``_`` (``WebQTrn-123_ab12…`` → ``WebQTrn-123``)."""
    return qid.split("_", 1)[0]


def split_by_base(ids: Sequence[str], held_fraction: float, seed: int = 0) -> tuple[list[str], list[str]]:
    """``(train bases, held-back bases)``: the distinct base questions of ``ids`` in a seeded order, held back until
    at least ``held_fraction`` of the questions are (every question of a base falls on one side)."""
    if not 0.0 <= held_fraction < 1.0:
        raise ConfigError(f"held-back fraction must be in [0, 1), got {held_fraction}")
    count: dict[str, int] = {}
    for qid in ids:
        count[base_question(qid)] = count.get(base_question(qid), 0) + 1
    bases = sorted(count)
    random.Random(seed).shuffle(bases)
    held: list[str] = []
    n = 0
    for b in bases:
        if n >= held_fraction * len(ids):
            break
        held.append(b)
        n += count[b]
    return sorted(set(bases) - set(held)), sorted(held)


@dataclass
class CWQSplit:
    """CWQ dev questions with graph paths: the training part, the held-back part (model selection) and what was left
    out (``info``: bases of each part, questions without a path, questions on WebQSP *test* questions skipped)."""

    train: list[RelationExample]
    held: list[RelationExample]
    info: dict


def cwq_dev_examples(store: GraphStore, path: Path | None = None, *, held_fraction: float = 0.15, seed: int = 0,
                     max_hops: int = 3, max_paths: int = 3) -> CWQSplit:
    """CWQ dev questions whose base is a WebQSP *train* question (those on a ``WebQTest-*`` question would carry
    that test question's paths into training), with their topic→answer paths from the loaded graph (WebQSP slice +
    CWQ dev: ``sgr load freebase webqsp_mini.jsonl cwq_dev.jsonl``), split by base question (:func:`split_by_base`).
    Questions without a path in the graph are left out and counted."""
    import hashlib
    import json

    from sgr.core.config import cache_dir
    from sgr.core.files import sha256_file
    from sgr.datasets import read_records

    path = path or _data_dir(None) / "cwq" / "cwq_dev.jsonl"
    if not path.exists():
        raise InputError(f"{path}: not found (CWQ dev); set SGR_SHARED_DATA")
    key = hashlib.sha256(json.dumps([sha256_file(path), store.graph_version(), held_fraction, seed, max_hops,
                                     max_paths]).encode()).hexdigest()[:16]
    cached = cache_dir("cwq-paths") / f"{key}.json"  # the paths take minutes to find: once per graph and settings
    if cached.is_file():
        blob = json.loads(cached.read_text())
        return CWQSplit(*[[RelationExample(**{**e, "paths": tuple(map(tuple, e["paths"])), "topics": tuple(e["topics"])})
                           for e in blob[part]] for part in ("train", "held")], blob["info"])
    _, questions = read_records(path)
    usable = [q for q in questions if q.id.startswith(WEBQSP_TRAIN_PREFIX)]
    train_bases, held_bases = split_by_base([q.id for q in usable], held_fraction, seed)
    held_set = set(held_bases)
    train: list[RelationExample] = []
    held: list[RelationExample] = []
    missing = 0
    for q in usable:
        paths = question_paths(store, q.topic_entities, q.answers, max_hops=max_hops, max_paths=max_paths)
        if not paths:
            missing += 1
            continue
        ex = RelationExample(id=q.id, question=q.text, paths=tuple(tuple(p) for p in paths),
                             hops=max(len(p) for p in paths), topics=tuple(q.topic_entities))
        (held if base_question(q.id) in held_set else train).append(ex)
    info = {"file": str(path), "questions": len(questions), "on_webqsp_train": len(usable),
            "skipped_on_webqsp_test": len(questions) - len(usable), "without_path": missing,
            "train_questions": len(train), "held_questions": len(held), "train_bases": train_bases,
            "held_bases": held_bases, "held_fraction": held_fraction, "seed": seed, "max_hops": max_hops}
    cached.write_text(json.dumps({"train": [asdict(e) for e in train], "held": [asdict(e) for e in held],
                                  "info": info}))
    return CWQSplit(train, held, info)
