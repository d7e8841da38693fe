"""RCR's confidence signals (sgr/methods/rcr/method.answer_signals): read from the walks, the linking and the
retriever's scores of the top answer's relations."""

from __future__ import annotations

import math

import pytest

from sgr.core.types import ReasoningPath
from sgr.methods.rcr.method import EvidenceSubgraph, PathWalk, WalkStep, answer_signals
from sgr.retrieval.entities import LinkedEntity


def walk(path: tuple[str, ...], ends: list[str]) -> PathWalk:
    steps = [WalkStep(relation=r, used=[r], substituted=False, edges=1, reached=1) for r in path]
    return PathWalk(path=path, steps=steps, endpoints=ends)


def graph() -> EvidenceSubgraph:
    g = EvidenceSubgraph(topics=["Japan"])
    g.walks = [walk(("currency",), ["Yen"]), walk(("currency_used",), ["Yen", "Dollar"]),
               walk(("capital",), ["Tokyo"]), PathWalk(path=("missing",))]  # the last walk stopped: incomplete
    return g


def ranked(*nodes: str) -> list[tuple[str, list[ReasoningPath]]]:
    return [(n, [ReasoningPath(nodes=["Japan", n], relations=["currency_used"])]) for n in nodes]


def test_the_walks_that_reach_the_top_answer_its_lead_and_the_linking() -> None:
    linked = [LinkedEntity(mention="japan", id="Japan", name="Japan", score=0.8, method="exact")]
    s = answer_signals(graph(), ranked("Yen", "Tokyo"), linked, [0.6])
    assert s["vote_share"] == pytest.approx(2 / 4)  # 2 of the 4 walks reach Yen
    assert s["vote_margin"] == pytest.approx((2 - 1) / 2)
    assert s["ev_votes_top"] == pytest.approx(math.log1p(2))
    assert s["link_score"] == pytest.approx(0.8) and s["link_given"] == 0.0
    assert s["gq_rel_mean"] == pytest.approx(0.6) and s["gq_rel_last"] == pytest.approx(0.6)
    assert s["ev_unjoined"] == 0.0  # one entity linked: nothing to join


def test_an_answer_that_meets_one_of_two_linked_entities_is_unjoined_and_the_question_length_counts() -> None:
    linked = [LinkedEntity(mention="japan", id="Japan", name="Japan", score=0.8, method="exact"),
              LinkedEntity(mention="asia", id="Asia", name="Asia", score=0.6, method="exact")]
    question = "what currency is used in the asian country called japan"  # 10 words
    assert answer_signals(graph(), ranked("Yen"), linked, [], question, met=1)["ev_unjoined"] == 1.0
    s = answer_signals(graph(), ranked("Yen"), linked, [], question, met=2)
    assert s["ev_unjoined"] == 0.0 and s["q_words"] == pytest.approx(1.0)


def test_a_lone_answer_leads_fully_and_a_given_topic_counts_as_given() -> None:
    linked = [LinkedEntity(mention="Japan", id="Japan", name="Japan", score=1.0, method="given")]
    s = answer_signals(graph(), ranked("Tokyo"), linked, [0.7, 0.0])
    assert s["vote_margin"] == 1.0 and s["link_given"] == 1.0
    assert s["gq_rel_last"] == 0.0 and s["gq_rel_mean"] == pytest.approx(0.35)  # the last relation's, and the mean


def test_no_answer_gives_zeros() -> None:
    s = answer_signals(graph(), [], [], [])
    assert all(v == 0.0 for v in s.values())
