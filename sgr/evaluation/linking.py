"""Entity-linking accuracy: does the topic sgr links from the question's text alone match the dataset's?

For each question with gold topic entities (a dataset's ``q_entity`` / MetaQA's bracketed name, resolved to node
ids), the question is linked as a user types it — no given topics, brackets removed — and the first linked entity
(the topic) counts as correct when it is one of the gold ones. Every linked entity counts for the further figures:
a question has ``all_found`` when each of its gold topics (those that resolve to a node) is among the linked entities
(a conjunction's second entity), reported over all questions (``all_topics_found``) and over those with two or more
gold topics (``all_topics_found_multi``); ``topic_recall`` is the share of gold topics linked and
``linked_precision`` the share of linked entities that are gold topics (linking every span would find every topic).
Used by ``bench/sgr.py`` (``linking/<dataset>/accuracy``) and ``bench/linking.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sgr.core.types import Question
from sgr.graph.store import GraphStore
from sgr.retrieval.entities import EntityLinker
from sgr.retrieval.mentions import LinkScorer


@dataclass
class LinkingResult:
    """Top-1 accuracy over the questions whose gold topics resolve to nodes, with the misses."""

    questions: int = 0
    correct: int = 0
    all_found: int = 0
    multi_questions: int = 0  # questions with two or more gold topics that resolve
    multi_all_found: int = 0
    gold_topics: int = 0
    gold_linked: int = 0
    linked: int = 0
    linked_gold: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.questions if self.questions else float("nan")

    def summary(self) -> dict[str, float]:
        return {"accuracy": round(self.accuracy, 4), "all_topics_found": _share(self.all_found, self.questions),
                "questions": self.questions, "multi_topic_questions": self.multi_questions,
                "all_topics_found_multi": _share(self.multi_all_found, self.multi_questions),
                "topic_recall": _share(self.gold_linked, self.gold_topics),
                "linked_precision": _share(self.linked_gold, self.linked)}


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else float("nan")


def linking_accuracy(store: GraphStore, questions: Sequence[Question], retriever: Any = None,
                     max_misses: int = 50, scorer: LinkScorer | None = None) -> LinkingResult:
    """Link each question from its text (``retriever``: the relation retriever whose scores are the relation
    evidence; None: no relation evidence; ``scorer``: the topic scorer, None the shipped one) and compare the topic
    with the gold ones."""
    linker = EntityLinker(store, link_scorer=scorer)
    gold_ids = linker.resolve({t for q in questions for t in q.topic_entities})
    out = LinkingResult()
    for q in questions:
        gold = {i for t in q.topic_entities for i in gold_ids.get(t, [])}
        if not gold:
            continue
        text = q.text.replace("[", "").replace("]", "")
        scores = {r.name: r.score for r in retriever.retrieve(text, 50)} if retriever is not None else {}
        linked = linker.link_question(text, relation_scores=scores)
        out.questions += 1
        ok = bool(linked) and linked[0].id in gold
        out.correct += ok
        ids = {e.id for e in linked}
        topics = [set(gold_ids[t]) for t in dict.fromkeys(q.topic_entities) if gold_ids.get(t)]
        found = sum(bool(ids & t) for t in topics)
        out.all_found += found == len(topics)
        out.gold_topics += len(topics)
        out.gold_linked += found
        out.linked += len(ids)
        out.linked_gold += len(ids & gold)
        if len(topics) > 1:
            out.multi_questions += 1
            out.multi_all_found += found == len(topics)
        if not ok and len(out.misses) < max_misses:
            out.misses.append({"id": q.id, "question": text, "gold": sorted(gold),
                               "linked": [(e.mention, e.id) for e in linked]})
    return out
