"""The dev questions that sgr's fitted parts learn from, split into training and held-out, and the per-store cached
extraction over them (``bench/linking.py``, ``bench/path_ranker.py``).

Training: CWQ dev on WebQSP *train* bases (``WebQTrn-…``) and ``n_train`` MetaQA dev questions per hop; held out:
CWQ dev on WebQSP *test* bases and ``n_held`` other MetaQA dev questions per hop (seed + hop). Optionally WebQSP
*train* questions (``webqsp_train_paths.jsonl``: text and gold relation paths, no topics or answers; asked against the
CWQ dev store, whose graph holds many of their facts), split the same way. Each item is ``(question, kind, held
out?)`` with kind the CWQ type, ``metaqa-<k>hop`` or ``webqsp-train``. :func:`webqsp_train_topics`: the WebQSP train
questions CWQ dev builds on, with their topic entities (linking on everyday phrasing). :func:`gold_end_questions`:
the questions with gold relation paths that none of those use (the word–relation lexicon's).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence

from sgr.core.config import cache_dir, shared_data_dir
from sgr.core.types import Question
from sgr.datasets import read_metaqa
from sgr.graph.store import GraphStore

DevItem = tuple[Question, str, bool]


def cwq_dev() -> list[DevItem]:
    """Every CWQ dev question (with its topics and answers), its type, and whether its WebQSP base is a test one."""
    out = []
    for line in open(shared_data_dir() / "cwq" / "cwq_dev.jsonl", encoding="utf-8"):
        r = json.loads(line)
        q = Question(id=r["id"], text=r["question"], topic_entities=list(r["q_entity"]), answers=list(r["answer"]))
        out.append((q, r["type"], r["id"].split("_")[0].startswith("WebQTest")))
    return out


def metaqa_dev(n_train: int, n_held: int, seed: int) -> list[DevItem]:
    """``n_train`` + ``n_held`` MetaQA dev questions per hop (a seeded sample), the first ``n_train`` for training."""
    out = []
    for hop in (1, 2, 3):
        qs = read_metaqa(shared_data_dir() / "metaqa" / f"{hop}hop_dev.tsv")
        pick = random.Random(seed + hop).sample(qs, n_train + n_held)
        out += [(q, f"metaqa-{hop}hop", i >= n_train) for i, q in enumerate(pick)]
    return out


def webqsp_train(n_train: int, n_held: int, seed: int) -> list[DevItem]:
    """``n_train`` + ``n_held`` WebQSP train questions (a seeded sample) with their gold relation paths, the first
    ``n_train`` for training."""
    rows = [json.loads(line) for line in open(shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl",
                                              encoding="utf-8")]
    pick = random.Random(seed).sample(rows, min(len(rows), n_train + n_held))
    return [(Question(id=r["id"], text=r["question"], gold_paths=[list(p) for p in r["ground_paths"]]),
             "webqsp-train", i >= n_train) for i, r in enumerate(pick)]


def gold_end_questions(exclude: set[str], per_hop: int = 1000) -> list[tuple[str, list[str]]]:
    """(text, the relations that end its gold paths) of every WebQSP train question and the first ``per_hop`` MetaQA
    dev questions per hop (file order), leaving out the ids in ``exclude`` (the questions a ranker trains or is checked
    on): what :func:`sgr.methods.sgr.word_relations.fit_word_relations` learns from."""
    out = []
    for line in open(shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if r["id"] not in exclude:
            out.append((r["question"], [p[-1] for p in r["ground_paths"] if p]))
    for hop in (1, 2, 3):
        qs = [q for q in read_metaqa(shared_data_dir() / "metaqa" / f"{hop}hop_dev.tsv") if q.id not in exclude]
        out += [(q.text, [p[-1] for p in q.gold_paths if p]) for q in qs[:per_hop]]
    return out


def extract_cached(name: str, extract: Callable[[GraphStore, Sequence[DevItem], str], list[dict]], *,
                   cwq_uri: str | None, metaqa_uri: str, n_train: int, n_held: int, seed: int,
                   reuse: bool, webqsp: tuple[int, int] = (0, 0)) -> list[dict]:
    """``extract(store, items, part)`` over CWQ dev (on ``cwq_uri``, default the configured store), the MetaQA dev
    sample (on ``metaqa_uri``) and, with ``webqsp`` = (training, held out) > 0, the WebQSP train sample (on
    ``cwq_uri``), each part cached in its own file (a failure loses one part); ``reuse`` reads the cached parts
    instead of extracting them again."""
    rows: list[dict] = []
    parts = [("cwq-dev", cwq_uri, cwq_dev), ("metaqa-dev", metaqa_uri, lambda: metaqa_dev(n_train, n_held, seed))]
    if sum(webqsp):
        parts.append((f"webqsp-train-{webqsp[0]}-{webqsp[1]}", cwq_uri, lambda: webqsp_train(*webqsp, seed)))
    for part, uri, items in parts:
        cache = cache_dir("bench") / f"{name}_{part}.json"
        if reuse and cache.is_file():
            rows += json.loads(cache.read_text())
            continue
        with (GraphStore(uri) if uri else GraphStore.from_settings()) as store:
            got = extract(store, items(), part)
        cache.write_text(json.dumps(got))
        rows += got
    return rows


def webqsp_train_topics() -> list[Question]:
    """WebQSP *train* questions with topic entities: those that CWQ dev builds on (``WebQTrn-N_…``), each with the
    topics that every one of its CWQ questions other than compositions keeps (a conjunction adds an entity, a
    comparative or superlative a literal; a composition replaces the topic by a description). Everyday phrasing
    ("what countries do people speak portuguese"), for checking linking on dev data; the topics are the CWQ
    training part's, so this is not a held-out set."""
    keep: dict[str, set[str]] = {}
    for q, kind, held in cwq_dev():
        base = q.id.split("_")[0]
        if not held and kind != "composition":
            keep[base] = keep[base] & set(q.topic_entities) if base in keep else set(q.topic_entities)
    out = []
    for line in open(shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl", encoding="utf-8"):
        r = json.loads(line)
        if keep.get(r["id"]):
            out.append(Question(id=r["id"], text=r["question"], topic_entities=sorted(keep[r["id"]])))
    return out


#: A WebQSP train question whose gold paths reach more answers than this from its topic is left out (a path
#: through a hub: "people of the same gender"), as is one whose topic the paths do not single out.
MAX_DERIVED_ANSWERS = 20


def webqsp_train_answerable(store: GraphStore, items: Sequence[DevItem]) -> list[dict]:
    """The WebQSP train questions ``store`` can answer, as dataset records (``id``, ``question``, ``q_entity``,
    ``answer``): WebQSP train gives text and gold relation paths only, so both the topic and the answers are derived
    from the paths, by rules that read no system output.

    - **Topic**: among the nodes a span of the question names wholly (the whole name, not a part of it, a near
      spelling or a demonym's place), the one that starts the most gold paths (:func:`topic_from_paths`; none when
      two tie), as ``bench/linking.py`` labels these questions.
    - **Answers**: the named nodes the gold paths reach from the topic, each edge either way (RoG's paths are
      shortest paths of the undirected graph), kept when the most paths reach them: RoG gives every shortest path to
      every answer, so an answer is reached by its own paths and a path through a hub reaches many nodes once.
      Between 1 and :data:`MAX_DERIVED_ANSWERS`, else the question is left out."""
    from sgr.retrieval import mentions
    from sgr.retrieval.supervision import (MAX_START_PATH, clean_paths, path_ends, path_starts,
                                           topic_from_paths)

    out = []
    for q, _kind, _held in items:
        paths = [p for p in clean_paths(q.gold_paths, 10) if len(p) <= MAX_START_PATH]
        if not paths:
            continue
        cands = mentions.mention_candidates(store, q.text)
        whole = [c.id for c in cands if c.match == 1.0 and c.coverage == 1.0 and c.method != "demonym"]
        topic = topic_from_paths(path_starts(store, whole, paths)) if whole else None
        if topic is None:
            continue
        reach = path_ends(store, topic, paths)
        if not reach:
            continue
        most = max(n for _, n in reach.values())
        answers = sorted(name for name, n in reach.values() if n == most)
        if len(answers) <= MAX_DERIVED_ANSWERS:
            topic_name = next(c.name for c in cands if c.id == topic)
            out.append({"id": q.id, "question": q.text, "q_entity": [topic_name or topic], "answer": answers,
                        "graph": []})
    return out
