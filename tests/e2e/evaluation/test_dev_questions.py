"""bench/dev_questions.py's WebQSP train dev set on real Neo4j: topics and answers derived from the gold paths."""

from __future__ import annotations

import sys
from pathlib import Path

from sgr.core.types import Question
from tests.helpers import hand_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from dev_questions import webqsp_train_answerable  # noqa: E402

NAMES = {"m.jb": "Justin Bieber", "m.jx": "Jaxon Bieber", "m.dr": "Drake", "m.male": "Male", "m.ca": "Canada",
         "m.st": "Stratford"}
TRIPLES = [("m.jb", "people.person.sibling_s", "m.sib"), ("m.sib", "people.sibling_relationship.sibling", "m.jx"),
           ("m.jb", "people.person.gender", "m.male"), ("m.jx", "people.person.gender", "m.male"),
           ("m.dr", "people.person.gender", "m.male"), ("m.jb", "people.person.place_of_birth", "m.st"),
           ("m.st", "location.location.containedby", "m.ca")]


def _item(qid: str, text: str, paths: list[list[str]]):
    return Question(id=qid, text=text, gold_paths=paths), "webqsp-train", False


def test_answers_are_what_the_most_gold_paths_reach_from_the_wholly_named_topic(clean_store) -> None:
    hand_graph(clean_store, NAMES, TRIPLES)
    items = [
        # the sibling walk (through a CVT) and the shared gender both reach Jaxon; the gender hub reaches Drake once
        _item("WebQTrn-1", "what is the name of justin bieber brother",
              [["people.person.sibling_s", "people.sibling_relationship.sibling"],
               ["people.person.gender", "people.person.gender"]]),
        _item("WebQTrn-2", "where is justin bieber from",
              [["people.person.place_of_birth", "location.location.containedby"]]),
        _item("WebQTrn-3", "who is bieber's brother", [["people.person.sibling_s"]]),  # no whole name: left out
        _item("WebQTrn-4", "where was drake born", [["people.person.place_of_birth"]]),  # no such edge: left out
    ]
    rows = {r["id"]: r for r in webqsp_train_answerable(clean_store, items)}
    assert set(rows) == {"WebQTrn-1", "WebQTrn-2"}
    assert rows["WebQTrn-1"]["q_entity"] == ["Justin Bieber"] and rows["WebQTrn-1"]["answer"] == ["Jaxon Bieber"]
    assert rows["WebQTrn-2"]["answer"] == ["Canada"]
