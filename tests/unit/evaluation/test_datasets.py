"""Dataset readers: MetaQA (with qtype paths), RoG-style, plain JSONL, Parquet; selection; errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sgr.datasets import load_dataset, metaqa_relation_path, read_metaqa
from sgr.core.errors import InputError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "evaluation"


def test_metaqa_reader_topic_hops_qtype_and_paths():
    ds = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"))
    assert ds.format == "metaqa" and ds.total == 6 and ds.split == "test"
    q = ds.questions[0]
    assert q.id == "2hop_test:1"
    assert q.topic_entities == ["John Krasinski"]
    assert q.text == "which person directed the movies starred by John Krasinski"
    assert q.answers == ["Nancy Meyers", "Sam Mendes", "George Clooney", "Ken Kwapis", "Luke Greenfield"]
    assert q.hops == 2 and q.qtype == "actor_to_movie_to_director"
    assert q.gold_paths == [["starred_actors", "directed_by"]]
    assert q.extra["gold_directions"] == [["in", "out"]]
    assert ds.questions[3].gold_paths == [["written_by", "written_by"]]


def test_metaqa_split_flag_switches_file():
    ds = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), split="dev")
    assert ds.path.name == "2hop_dev.tsv" and ds.total == 4 and ds.questions[0].qtype == "director_to_movie_to_language"
    with pytest.raises(InputError, match="2hop_train.tsv"):
        load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), split="train")


@pytest.mark.parametrize("qtype, expected", [
    ("movie_to_director", [("directed_by", "out")]),
    ("tag_to_movie", [("has_tags", "in")]),
    ("actor_to_movie_to_director", [("starred_actors", "in"), ("directed_by", "out")]),
    ("movie_to_writer_to_movie_to_language", [("written_by", "out"), ("written_by", "in"), ("in_language", "out")]),
])
def test_metaqa_relation_path(qtype, expected):
    assert metaqa_relation_path(qtype) == expected


def test_every_shared_metaqa_qtype_converts(shared_data):
    qtypes = set()
    for f in (shared_data / "metaqa").glob("*_qtype.txt"):
        qtypes |= {line.strip() for line in f.read_text().splitlines() if line.strip()}
    assert len(qtypes) > 30
    for qt in qtypes:
        path = metaqa_relation_path(qt)
        assert len(path) == qt.count("_to_")
    with pytest.raises(ValueError):
        metaqa_relation_path("director_to_actor")


def test_rog_records():
    ds = load_dataset(str(FIX / "rog_mini.jsonl"))
    assert ds.format == "rog" and [q.id for q in ds.questions] == ["rog-1", "rog-2", "rog-3"]
    q1, q2, _ = ds.questions
    assert q1.topic_entities == ["Jamaica"] and q1.topic_mids == ["m.03_r3"]
    assert q1.gold_paths == [["location.country.languages_spoken"]]  # empty path dropped
    assert q1.qtype == "composition" and q1.hops is None
    assert q2.answers == []  # [null] answers: no gold


def test_plain_jsonl_and_parquet(tmp_path):
    ds = load_dataset(str(FIX / "plain.jsonl"))
    assert ds.format == "jsonl"
    p1, p2 = ds.questions
    assert p1.hops == 1 and p1.qtype == "movie_to_director" and p1.answers == ["William Dieterle"]
    assert p2.answers == ["English"] and p2.topic_entities == ["Kismet"] and p2.gold_paths == [["in_language"]]

    pd = pytest.importorskip("pandas")
    recs = [json.loads(line) for line in (FIX / "rog_mini.jsonl").read_text().splitlines()]
    pd.DataFrame(recs).to_parquet(tmp_path / "rog.parquet")
    pq = load_dataset(str(tmp_path / "rog.parquet"))
    assert pq.format == "rog"
    assert [(q.id, q.answers, q.gold_paths, q.topic_mids) for q in pq.questions] == \
        [(q.id, q.answers, q.gold_paths, q.topic_mids) for q in load_dataset(str(FIX / "rog_mini.jsonl")).questions]


def test_sample_seed_and_limit_are_deterministic():
    full = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"))
    a = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), sample=3, seed=7)
    b = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), sample=3, seed=7)
    c = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), sample=3, seed=8)
    assert [q.id for q in a.questions] == [q.id for q in b.questions]
    assert a.fingerprint() == b.fingerprint()
    ids = [q.id for q in full.questions]
    assert [q.id for q in a.questions] == sorted((q.id for q in a.questions), key=ids.index)  # file order kept
    assert len({q.id for q in a.questions}) == 3 and a.total == 6
    assert a.selection == {"sample": 3, "seed": 7}
    draws = {tuple(q.id for q in load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), sample=3, seed=s).questions)
             for s in range(10)}
    assert len(draws) > 1  # the seed matters
    assert c.fingerprint() == load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), sample=3, seed=8).fingerprint()
    lim = load_dataset(str(FIX / "metaqa" / "2hop_test.tsv"), limit=2)
    assert [q.id for q in lim.questions] == ids[:2]


def test_named_datasets(shared_data, monkeypatch):
    monkeypatch.setenv("SGR_SHARED_DATA", str(shared_data))
    ds = load_dataset("metaqa-1hop", limit=3)
    assert ds.name == "metaqa-1hop" and ds.total == 9947 and ds.questions[0].hops == 1
    assert load_dataset("metaqa-3hop", split="dev", limit=1).path.name == "3hop_dev.tsv"
    w = load_dataset("webqsp", sample=5, seed=1)
    assert w.total == 1628 and all(q.topic_mids for q in w.questions)
    with pytest.raises(InputError, match="no split"):
        load_dataset("webqsp", split="dev")


def test_errors_name_file_line_and_field(tmp_path):
    with pytest.raises(InputError, match=r"bad_missing_question.jsonl:2: field 'question'"):
        load_dataset(str(FIX / "bad_missing_question.jsonl"))
    with pytest.raises(InputError, match=r"1hop_nobracket_test.tsv:1: .*brackets"):
        read_metaqa(FIX / "1hop_nobracket_test.tsv")
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"id": 1, "question": "q", "answers": []}\n{not json\n')
    with pytest.raises(InputError, match=r"x.jsonl:2: not a JSON object"):
        load_dataset(str(bad))
    dup = tmp_path / "d.jsonl"
    dup.write_text('{"id": 1, "question": "q", "answers": []}\n{"id": 1, "question": "r", "answers": []}\n')
    with pytest.raises(InputError, match="twice"):
        load_dataset(str(dup))
    with pytest.raises(InputError, match="no such dataset"):
        load_dataset(str(tmp_path / "missing.jsonl"))
    with pytest.raises(InputError, match="no 'split' field"):
        load_dataset(str(FIX / "plain.jsonl"), split="dev")
