"""Entity linking: mentions → ``:Entity`` nodes, the V_q of the question schema (SGR §3.1.1).

Order of evidence for one mention (first that yields a node wins its tier):

1. **given topic entities** (a dataset's ``q_entity`` / ``--topic``) are used as they are: MID pass-through
   (``m.03_r3`` is looked up as an id), else an exact ``id`` or ``name`` match;
2. **exact / normalised name match** (case, accents, punctuation and a leading "the" ignored);
3. **full-text index** ``entity_name`` (Lucene; fuzzy terms for misspellings), candidates re-scored by a
   character-level similarity to the mention.

Ties between candidates of the best tier (same normalised name, or full-text scores within ``tie_margin``)
are broken by how well each candidate's relation types match R_q: the sum of the schema's relation scores over
the candidate's incident relationship types (SGR §3.1.1, "entity linking module maps mentions …"), then by
degree. When no mention is known, :func:`spans` proposes the question's n-grams and the full-text index filters
them (longest match first).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from sgr.graph.store import GraphStore, is_mid

LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/]|&&|\|\|)')
STOPWORDS = {
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "was", "are",
    "were", "be", "been", "do", "does", "did", "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
    "that", "this", "these", "those", "it", "its", "his", "her", "their", "they", "he", "she", "we", "you", "i",
    "me", "my", "has", "have", "had", "as", "about", "into", "than", "then", "there", "many", "much", "name",
    "names", "people", "person", "movie", "movies", "film", "films", "also", "can", "will", "would", "play", "plays",
    "played", "s", "'s", "type", "kind", "year", "years", "language", "languages", "genre", "genres",
}


@dataclass
class LinkedEntity:
    """A mention linked to a node; ``method`` says which tier linked it (given, mid, exact, normalised, fulltext)."""

    mention: str
    id: str
    name: str | None
    score: float
    method: str
    relation_types: list[str] = field(default_factory=list)
    degree: int = 0

    @property
    def label(self) -> str:
        return self.name or self.id


def normalise(text: str) -> str:
    """Lower case, accents stripped, punctuation to spaces, a leading "the" dropped, blanks collapsed."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(ch for ch in t if not unicodedata.combining(ch)).lower()
    t = re.sub(r"[^0-9a-z]+", " ", t).strip()
    t = re.sub(r"^the ", "", t)
    return t


def lucene_query(text: str, fuzzy: bool = True) -> str:
    """A Lucene query for a mention: each term escaped (and fuzzy ``~`` when it has ≥ 5 letters)."""
    terms = [t for t in re.split(r"\s+", text.strip()) if t]
    out = []
    for t in terms:
        esc = LUCENE_SPECIAL.sub(r"\\\1", t)
        if esc.upper() in ("AND", "OR", "NOT", "TO"):
            esc = esc.lower()
        out.append(esc + ("~" if fuzzy and len(t) >= 5 and t.isalpha() else ""))
    return " ".join(out)


def spans(question: str, max_len: int = 6) -> list[str]:
    """Word n-grams of the question (longest first) that are not only stop words: candidate mentions."""
    words = re.findall(r"[\w'.\-&]+", question.replace("[", " ").replace("]", " "))
    words = [w.strip(".'") for w in words if w.strip(".'")]
    out: list[str] = []
    for n in range(min(max_len, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if all(w.lower() in STOPWORDS for w in gram):
                continue
            if gram[0].lower() in STOPWORDS or gram[-1].lower() in STOPWORDS:
                continue
            out.append(" ".join(gram))
    return list(dict.fromkeys(out))


class EntityLinker:
    """Links mentions to ``:Entity`` nodes of ``store`` (see the module docstring)."""

    def __init__(self, store: GraphStore, *, fulltext_limit: int = 10, tie_margin: float = 0.05) -> None:
        self.store = store
        self.fulltext_limit = fulltext_limit
        self.tie_margin = tie_margin

    # -- lookups ---------------------------------------------------------------------------------
    def by_id(self, ids: Sequence[str]) -> dict[str, dict]:
        rows = self.store.read("UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id AS id, e.name AS name", {"ids": list(ids)})
        return {r["id"]: r for r in rows}

    def by_name(self, name: str) -> list[dict]:
        return self.store.read("MATCH (e:Entity) WHERE e.name = $n RETURN e.id AS id, e.name AS name LIMIT 20", {"n": name})

    def fulltext(self, text: str, limit: int | None = None, fuzzy: bool = True) -> list[dict]:
        q = lucene_query(text, fuzzy)
        if not q:
            return []
        try:
            return self.store.read(
                "CALL db.index.fulltext.queryNodes('entity_name', $q) YIELD node, score "
                "RETURN node.id AS id, node.name AS name, score LIMIT $k", {"q": q, "k": limit or self.fulltext_limit})
        except Exception:  # noqa: BLE001 - a query Lucene cannot parse links nothing
            return []

    def relation_profile(self, ids: Sequence[str]) -> dict[str, tuple[list[str], int]]:
        """Incident relationship types and degree of each node."""
        rows = self.store.read(
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) "
            "OPTIONAL MATCH (e)-[r]-() WHERE NOT type(r) STARTS WITH 'SGR_' "
            "RETURN e.id AS id, collect(DISTINCT type(r)) AS types, count(r) AS degree", {"ids": list(ids)})
        return {r["id"]: (r["types"], r["degree"]) for r in rows}

    # -- tiers -----------------------------------------------------------------------------------
    def link_given(self, topics: Iterable[str], relation_scores: dict[str, float] | None = None) -> list[LinkedEntity]:
        """Topic entities from a dataset or ``--topic``: MID / id / exact name; else the mention tiers."""
        out: list[LinkedEntity] = []
        topics = [t for t in topics if t and t.strip()]
        found = self.by_id(topics)
        for t in topics:
            if t in found:
                row = found[t]
                out.append(LinkedEntity(t, row["id"], row["name"], 1.0, "mid" if is_mid(t) else "given"))
                continue
            rows = self.by_name(t)
            if rows:
                best = self._break_ties(t, [dict(r, score=1.0) for r in rows], relation_scores, "given")
                out.append(best)
                continue
            linked = self.link_mention(t, relation_scores)
            if linked is not None:
                out.append(linked)
        return _dedupe(out)

    def link_mention(self, mention: str, relation_scores: dict[str, float] | None = None) -> LinkedEntity | None:
        """The best node for one mention (exact, then normalised, then full-text), or None."""
        mention = mention.strip()
        if not mention:
            return None
        if is_mid(mention):
            found = self.by_id([mention])
            if mention in found:
                return LinkedEntity(mention, mention, found[mention]["name"], 1.0, "mid")
        rows = self.by_name(mention)
        if rows:
            return self._break_ties(mention, [dict(r, score=1.0) for r in rows], relation_scores, "exact")
        cands = self.fulltext(mention, self.fulltext_limit * 2)
        norm = normalise(mention)
        same = [dict(r, score=1.0) for r in cands if r.get("name") and normalise(r["name"]) == norm]
        if same:
            return self._break_ties(mention, same, relation_scores, "normalised")
        scored = []
        for r in cands:
            if not r.get("name"):
                continue
            sim = SequenceMatcher(None, norm, normalise(r["name"])).ratio()
            if sim >= 0.6:
                scored.append(dict(r, score=sim))
        if not scored:
            return None
        return self._break_ties(mention, scored, relation_scores, "fulltext")

    def link_question(self, question: str, mentions: Sequence[str] = (), *, topics: Sequence[str] = (),
                      relation_scores: dict[str, float] | None = None, max_entities: int = 3) -> list[LinkedEntity]:
        """V_q for a question: given topics first; else the mentions; else n-gram spans of the question."""
        if topics:
            linked = self.link_given(topics, relation_scores)
            if linked:
                return linked
        out: list[LinkedEntity] = []
        for m in mentions:
            e = self.link_mention(m, relation_scores)
            if e is not None:
                out.append(e)
        if out:
            return _dedupe(out)[:max_entities]
        return self.link_spans(question, relation_scores, max_entities)

    def link_spans(self, question: str, relation_scores: dict[str, float] | None = None,
                   max_entities: int = 2) -> list[LinkedEntity]:
        """Longest question n-grams whose normalised form names a node (full-text filtered), no overlaps."""
        qnorm = f" {normalise(question)} "
        taken: list[str] = []
        out: list[LinkedEntity] = []
        for span in spans(question):
            snorm = normalise(span)
            if not snorm or any(f" {snorm} " in f" {t} " for t in taken):
                continue
            e = self.link_mention(span, relation_scores)
            if e is None:
                continue
            if e.method == "fulltext":
                # only accept near-verbatim names that occur in the question for span linking
                if e.score < 0.85 or f" {normalise(e.label)} " not in qnorm and e.score < 0.9:
                    continue
            e.mention = span
            out.append(e)
            taken.append(snorm)
            if len(out) >= max_entities:
                break
        return _dedupe(out)

    def verbatim_mentions(self, question: str, max_entities: int = 3, limit: int = 60) -> list[LinkedEntity]:
        """Nodes whose normalised name occurs word for word in the question, longest first, no overlaps — one
        full-text query (used for the question's further entities, which only count for path alignment)."""
        words = [w for w in re.findall(r"[\w']+", question.lower()) if w not in STOPWORDS and len(w) > 1]
        if not words:
            return []
        rows = self.fulltext(" ".join(words), limit, fuzzy=False)
        qnorm = f" {normalise(question)} "
        hits = []
        for r in rows:
            n = normalise(r.get("name") or "")
            if len(n) >= 4 and f" {n} " in qnorm and not all(w in STOPWORDS for w in n.split()):
                hits.append((len(n), r))
        out: list[LinkedEntity] = []
        taken: list[str] = []
        for _, r in sorted(hits, key=lambda x: -x[0]):
            n = normalise(r["name"])
            if any(f" {n} " in f" {t} " for t in taken):
                continue
            taken.append(n)
            out.append(LinkedEntity(r["name"], r["id"], r["name"], 1.0, "verbatim"))
            if len(out) >= max_entities:
                break
        return out

    # -- ties --------------------------------------------------------------------------------------
    def _break_ties(self, mention: str, cands: list[dict], relation_scores: dict[str, float] | None,
                    method: str) -> LinkedEntity:
        cands = sorted(cands, key=lambda r: -r["score"])
        top = cands[0]["score"]
        tied = [c for c in cands if c["score"] >= top - self.tie_margin][:self.fulltext_limit]
        profile = self.relation_profile([c["id"] for c in tied])
        rel = relation_scores or {}

        def key(c: dict) -> tuple[float, float, int]:
            types, degree = profile.get(c["id"], ([], 0))
            match = max((rel.get(t, 0.0) for t in types), default=0.0) + 0.1 * sum(rel.get(t, 0.0) for t in types)
            return (round(match, 3), c["score"], degree)

        best = max(tied, key=key)
        types, degree = profile.get(best["id"], ([], 0))
        return LinkedEntity(mention, best["id"], best.get("name"), float(best["score"]), method, list(types), degree)


def _dedupe(items: list[LinkedEntity]) -> list[LinkedEntity]:
    seen: set[str] = set()
    out = []
    for e in items:
        if e.id not in seen:
            seen.add(e.id)
            out.append(e)
    return out
