"""Which of a question's mentions is its topic: every span that names a node, scored, the best first.

"what currency does japan use?" names two nodes — *Currency* and *Japan* — and only one is what the question is
about. :func:`mention_candidates` finds every (span, node) pair in a few batched queries (exact ids, exact names
through the full-text index, normalised and near-verbatim names among the full-text hits of the question's words);
:func:`featurize` describes each pair by evidence that does not depend on one dataset:

* how well the span names the node (exact / normalised / similarity) and how long the span is;
* where the span stands: right after "what/which (kind of)" it is the answer's type, not the topic (``TYPE``);
* capitalisation, where the question is cased at all;
* the graph: how well the node's relationship types match the question (the relation retriever's scores — the
  question's relations as evidence), its degree, and whether it is a *type node* (most of its edges are type
  statements, :data:`sgr.core.lexicon.TYPE_RELATIONS`).

A :class:`LinkScorer` (logistic regression, fitted on dev questions by ``bench/linking.py`` and shipped as
``sgr/assets/linker.json``) turns the features into P(topic | span, node); without the file the scorer falls back to
the match, the relation evidence and the span length, in that order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from sgr.core.lexicon import STOPWORDS, TYPE, TYPE_RELATIONS
from sgr.core.logistic import LogisticScorer, asset_file, load_scorer
from sgr.core.text import lucene_terms, normalize
from sgr.graph.store import EVIDENCE_REL, GraphStore

ASSET = "linker.json"
#: The features of one (span, node) pair, in order (module docstring).
FEATURES = ("match", "exact", "span_words", "after_wh", "capitalised", "cased_question", "rel_match", "rel_sum",
            "log_degree", "type_node", "position")
_WORD = re.compile(r"[\w'.\-&]+")


@dataclass
class MentionCandidate:
    """One span of the question (word offsets ``start``–``end``) and a node it names."""

    span: str
    start: int
    end: int
    id: str
    name: str | None
    match: float
    method: str  # "id" | "exact" | "normalised" | "fulltext"
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    relation_types: list[str] = field(default_factory=list)
    degree: int = 0

    def overlaps(self, other: "MentionCandidate") -> bool:
        return self.start < other.end and other.start < self.end


def question_words(question: str) -> list[str]:
    """The question's words as spans are cut from them (brackets dropped, edge dots and quotes stripped)."""
    words = _WORD.findall(question.replace("[", " ").replace("]", " "))
    return [w.strip(".'") for w in words if w.strip(".'")]


def spans(words: Sequence[str], max_len: int = 6) -> list[tuple[int, int, str]]:
    """(start, end, text) of each word n-gram (longest first) that neither starts nor ends with a stop word."""
    out: list[tuple[int, int, str]] = []
    for n in range(min(max_len, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if gram[0].lower() in STOPWORDS or gram[-1].lower() in STOPWORDS:
                continue
            out.append((i, i + n, " ".join(gram)))
    return out


def mention_candidates(store: GraphStore, question: str, *, max_len: int = 6, fulltext_limit: int = 80,
                       min_similarity: float = 0.85) -> list[MentionCandidate]:
    """Every (span, node) pair the question names (module docstring), with each node's relationship types and
    degree read once."""
    words = question_words(question)
    grams = spans(words, max_len)
    if not grams:
        return []
    texts = sorted({t for _, _, t in grams})
    found: dict[tuple[int, int, str], MentionCandidate] = {}

    def add(i: int, j: int, text: str, node_id: str, name: str | None, match: float, method: str) -> None:
        key = (i, j, node_id)
        if key not in found or found[key].match < match:
            found[key] = MentionCandidate(text, i, j, node_id, name, match, method)

    by_text: dict[str, list[tuple[int, int]]] = {}
    for i, j, t in grams:
        by_text.setdefault(t, []).append((i, j))
    for r in store.read("UNWIND $t AS t MATCH (e:Entity {id: t}) RETURN t, e.id AS id, e.name AS name", {"t": texts}):
        for i, j in by_text[r["t"]]:
            add(i, j, r["t"], r["id"], r["name"], 1.0, "id")
    content = [w for w in words if w.lower() not in STOPWORDS and len(w) > 1]
    query = lucene_terms(" ".join(content)) if content else ""
    rows: list[dict] = []
    if query:
        try:
            rows = store.read("CALL db.index.fulltext.queryNodes('entity_name', $q) YIELD node, score "
                              "RETURN node.id AS id, node.name AS name LIMIT $k", {"q": query, "k": fulltext_limit})
        except Exception:  # noqa: BLE001 - a query Lucene cannot parse finds nothing
            rows = []
    norm_spans: dict[str, list[tuple[int, int, str]]] = {}
    for i, j, t in grams:
        norm_spans.setdefault(normalize(t), []).append((i, j, t))
    for r in rows:
        name = r.get("name")
        if not name:
            continue
        n = normalize(name)
        for i, j, t in norm_spans.get(n, []):
            add(i, j, t, r["id"], name, 1.0, "exact" if t == name else "normalised")
        for sn, places in norm_spans.items():
            if sn == n or not sn or abs(len(sn) - len(n)) > max(3, len(n) // 3):
                continue
            sim = SequenceMatcher(None, sn, n).ratio()
            if sim >= min_similarity:
                for i, j, t in places:
                    add(i, j, t, r["id"], name, sim, "fulltext")
    cands = list(found.values())
    if cands:
        profile = store.read(
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) "
            "CALL (e) { MATCH (e)-[r]-() WHERE NOT type(r) STARTS WITH 'SGR_' WITH r LIMIT $cap "
            "  RETURN collect(type(r)) AS rels } "
            f"RETURN e.id AS id, rels, COUNT {{ (e)--() }} - COUNT {{ (e)-[:{EVIDENCE_REL}]-() }} AS degree",
            {"ids": sorted({c.id for c in cands}), "cap": 200})
        info = {r["id"]: (r["rels"], r["degree"]) for r in profile}
        for c in cands:
            rels, c.degree = info.get(c.id, ([], 0))
            c.relation_types = list(dict.fromkeys(rels))
            c.features["type_node"] = (sum(r in TYPE_RELATIONS for r in rels) / len(rels)) if rels else 0.0
    return cands


def featurize(question: str, cands: Sequence[MentionCandidate], relation_scores: Mapping[str, float]) -> None:
    """Fill each candidate's :data:`FEATURES` (module docstring)."""
    words = question_words(question)
    n = max(1, len(words))
    cased = any(ch.isupper() for ch in question[1:])
    wh_type = set()
    for m in TYPE.finditer(" ".join(words)):  # word offset of the type word after "what/which (kind of)"
        wh_type.add(len(" ".join(words)[:m.start(2)].split()))
    for c in cands:
        span_words = words[c.start:c.end]
        caps = [w[:1].isupper() for k, w in enumerate(span_words) if c.start + k > 0]
        types = c.relation_types
        rel = [relation_scores.get(t, 0.0) for t in types]
        c.features.update({
            "match": c.match, "exact": float(c.method in ("id", "exact", "normalised")),
            "span_words": float(c.end - c.start), "after_wh": float(c.start in wh_type),
            "capitalised": (sum(caps) / len(caps)) if caps and cased else 0.0, "cased_question": float(cased),
            "rel_match": max(rel, default=0.0), "rel_sum": 0.1 * sum(rel), "log_degree": math.log1p(c.degree),
            "position": c.start / n})
        c.features.setdefault("type_node", 0.0)


#: P(topic | span, node) = σ(w·z + b): the topic scorer is a :class:`~sgr.core.logistic.LogisticScorer` over
#: :data:`FEATURES` of a candidate's ``features``
LinkScorer = LogisticScorer


def asset_path() -> Path:
    return asset_file(ASSET)


def load_link_scorer(path: str | None = None) -> LinkScorer | None:
    """The topic scorer at ``path`` (default: the shipped one), or None when there is none."""
    return load_scorer(str(path or asset_path()), FEATURES)


def train_link_scorer(cands: Sequence[MentionCandidate], labels: Sequence[int], *, c: float = 1.0,
                      sample_weight: Sequence[float] | None = None,
                      provenance: dict[str, Any] | None = None) -> LinkScorer:
    """Fit the topic scorer on candidates' features and 0/1 labels (the node is a gold topic)."""
    return LogisticScorer.fit(FEATURES, [c.features for c in cands], labels, c=c, sample_weight=sample_weight,
                              provenance=provenance)


def rank(question: str, cands: list[MentionCandidate], relation_scores: Mapping[str, float],
         scorer: LinkScorer | None = None) -> list[MentionCandidate]:
    """The candidates scored and sorted best first (the learned scorer, else match, relation evidence, length)."""
    featurize(question, cands, relation_scores)
    for c in cands:
        c.score = scorer.score(c.features) if scorer is not None else (
            c.match + 0.5 * c.features["rel_match"] + 0.05 * c.features["span_words"] - c.features["after_wh"])
    return sorted(cands, key=lambda c: (-c.score, -(c.end - c.start), c.start, c.id))


def choose(ranked: Sequence[MentionCandidate], *, max_entities: int = 3, min_score: float = 0.5
           ) -> list[MentionCandidate]:
    """The topic (the best candidate) and the further entities: non-overlapping candidates scoring at least
    ``min_score`` (the conjunction's other entities), one node per span."""
    out: list[MentionCandidate] = []
    for c in ranked:
        if len(out) >= max_entities:
            break
        if out and (c.score < min_score or any(c.overlaps(o) or c.id == o.id for o in out)):
            continue
        out.append(c)
    return out
