"""Entity linking: mentions → ``:Entity`` nodes, the V_q of the question schema (SGR §3.1.1).

Order of evidence for one mention (first that yields a node wins its tier):

1. **given topic entities** (a dataset's ``q_entity`` / ``--topic``) are used as they are: MID pass-through
   (``m.03_r3`` is looked up as an id), else an exact ``id`` or ``name`` match;
2. **exact / normalised name match** (case, punctuation and articles ignored: :func:`sgr.core.text.normalize`);
3. **full-text index** ``entity_name`` (Lucene; fuzzy terms for misspellings), candidates re-scored by a
   character-level similarity to the mention.

Ties between candidates of the best tier (same normalised name, or full-text scores within ``tie_margin``)
are broken by how well each candidate's relation types match R_q: the sum of the schema's relation scores over
the candidate's incident relationship types (SGR §3.1.1, "entity linking module maps mentions …"), then by
degree. When no mention is known, every (span, node) pair the question's n-grams name is scored and the best is the
topic (:mod:`sgr.retrieval.mentions`: match, span, position, capitalisation, relation evidence, type nodes).

Dataset strings (topic entities and gold answers of MetaQA and the WebQSP slice, by name or Freebase MID) are
resolved in bulk by :meth:`EntityLinker.resolve`: in sgr's graph model an entity's ``id`` is its MID when it has
one and its name otherwise, so a string is looked up first as an ``id`` (unique-constraint index) and, when that
finds nothing, as an exact ``name`` through the full-text index (a phrase query, then an equality filter, so the
fuzzy index never decides a match).

Names are compared through :func:`sgr.core.text.normalize`, the one normaliser of the package.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from neo4j.exceptions import Neo4jError

from sgr.retrieval.mentions import LinkScorer, possessive, question_words
from sgr.retrieval.mentions import spans as mention_spans
from sgr.core.text import lucene_phrase, lucene_terms, normalize
from sgr.core.lexicon import STOPWORDS
from sgr.graph.profile import GraphProfile, fulltext_indexes
from sgr.graph.store import EVIDENCE_REL, HUB_EDGE_SAMPLE, TYPES_AT, GraphStore, is_mid, quote_identifier

#: Bulk resolution of dataset strings (:meth:`EntityLinker.resolve`): by id, then by exact name via full text.
RESOLVE_BY_ID = "UNWIND $keys AS k MATCH (e:Entity {id: k}) RETURN k, e.id AS id"
RESOLVE_BY_NAME = ("UNWIND $rows AS row "
                   "CALL db.index.fulltext.queryNodes('entity_name', row.q, {limit: 50}) YIELD node "
                   "WHERE node.name = row.name RETURN row.name AS k, node.id AS id")


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
    labels: list[str] = field(default_factory=list)  # a profiled graph's labels of the node (ProfileLinker)
    span: tuple[int, int] = (0, 0)  # the mention's words in the question (ProfileLinker)

    @property
    def label(self) -> str:
        return self.name or self.id


def linked_names(entities: Iterable[LinkedEntity]) -> list[str]:
    """Each linked entity's mention and label: the words that name the question's entities, not what it asks for
    (the word–relation lexicon leaves them out of the question's words)."""
    return [t for e in entities for t in (e.mention, e.label)]


def spans(question: str, max_len: int = 6) -> list[str]:
    """Word n-grams of the question (longest first) that neither start nor end with a stop word: candidate mentions
    (:func:`sgr.retrieval.mentions.spans`)."""
    return list(dict.fromkeys(t for _, _, t in mention_spans(question_words(question), max_len)))


class EntityLinker:
    """Links mentions to ``:Entity`` nodes of ``store`` (see the module docstring)."""

    def __init__(self, store: GraphStore, *, fulltext_limit: int = 10, tie_margin: float = 0.05,
                 link_scorer: LinkScorer | None = None) -> None:
        self.store = store
        self.fulltext_limit = fulltext_limit
        self.tie_margin = tie_margin
        self.link_scorer = link_scorer  # the topic scorer of :meth:`link_spans`; None: the shipped one

    # -- lookups ---------------------------------------------------------------------------------
    def by_id(self, ids: Sequence[str]) -> dict[str, dict]:
        rows = self.store.read("UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id AS id, e.name AS name", {"ids": list(ids)})
        return {r["id"]: r for r in rows}

    def by_name(self, name: str) -> list[dict]:
        return self.store.read("MATCH (e:Entity) WHERE e.name = $n RETURN e.id AS id, e.name AS name LIMIT 20", {"n": name})

    def fulltext(self, text: str, limit: int | None = None, fuzzy: bool = True) -> list[dict]:
        q = lucene_terms(text, fuzzy)
        if not q:
            return []
        try:
            return self.store.read(
                "CALL db.index.fulltext.queryNodes('entity_name', $q) YIELD node, score "
                "RETURN node.id AS id, node.name AS name, score LIMIT $k", {"q": q, "k": limit or self.fulltext_limit})
        except Exception:  # noqa: BLE001 - a query Lucene cannot parse links nothing
            return []

    def relation_profile(self, ids: Sequence[str]) -> dict[str, tuple[list[str], int]]:
        """Incident relationship types (from the first :data:`HUB_EDGE_SAMPLE` edges) and degree of each node.

        The degree is read from the store's degree counts (``COUNT { (e)--() }`` expands no edge) less the saved
        evidence links."""
        rows = self.store.read(
            f"UNWIND $ids AS i MATCH (e:Entity {{id: i}}) {TYPES_AT} "
            f"RETURN e.id AS id, types, COUNT {{ (e)--() }} - COUNT {{ (e)-[:{EVIDENCE_REL}]-() }} AS degree",
            {"ids": list(ids), "cap": HUB_EDGE_SAMPLE})
        return {r["id"]: (r["types"], r["degree"]) for r in rows}

    def resolve(self, keys: Iterable[str], by_name: bool = True, batch_size: int = 2000) -> dict[str, list[str]]:
        """Map each dataset string in ``keys`` to the ids of the ``:Entity`` nodes it denotes (``[]`` if none):
        an ``id`` match, else (``by_name``) nodes whose ``name`` is exactly the string."""
        wanted = list(dict.fromkeys(k for k in keys if k))
        found: dict[str, list[str]] = {k: [] for k in wanted}
        for i in range(0, len(wanted), batch_size):
            for row in self.store.read(RESOLVE_BY_ID, {"keys": wanted[i:i + batch_size]}):
                found[row["k"]].append(row["id"])
        if not by_name:
            return found
        missing = [{"name": k, "q": q} for k in wanted if not found[k] and (q := lucene_phrase(k))]
        for i in range(0, len(missing), batch_size):
            chunk = missing[i:i + batch_size]
            try:
                rows = self.store.read(RESOLVE_BY_NAME, {"rows": chunk})
            except Neo4jError:  # one unparsable phrase fails the batch: retry one by one, skip failures
                rows = []
                for one in chunk:
                    try:
                        rows.extend(self.store.read(RESOLVE_BY_NAME, {"rows": [one]}))
                    except Neo4jError:
                        continue
            for row in rows:
                if row["id"] not in found[row["k"]]:
                    found[row["k"]].append(row["id"])
        return found

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
        norm = normalize(mention)
        same = [dict(r, score=1.0) for r in cands if r.get("name") and normalize(r["name"]) == norm]
        if same:
            return self._break_ties(mention, same, relation_scores, "normalised")
        scored = []
        for r in cands:
            if not r.get("name"):
                continue
            sim = SequenceMatcher(None, norm, normalize(r["name"])).ratio()
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
                   max_entities: int = 3) -> list[LinkedEntity]:
        """The question's topic among all the nodes its spans name, then its further entities
        (:mod:`sgr.retrieval.mentions`: every (span, node) pair scored by the shipped linker, no overlaps)."""
        from sgr.retrieval.mentions import choose, load_link_scorer, mention_candidates, rank, topic_hops

        scorer = self.link_scorer or load_link_scorer()
        ranked = rank(question, mention_candidates(self.store, question), relation_scores or {}, scorer)
        return [LinkedEntity(c.span, c.id, c.name, round(c.score, 4), c.method, c.relation_types, c.degree)
                for c in choose(ranked, max_entities=max_entities, joined=topic_hops(self.store, ranked))]

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


# -- a profiled graph (a user's own labels and naming properties) ----------------------------------------------------
#: A node's name, labels and degree, by element id (what :class:`ProfileLinker` reports for a match).
_NODE_ROWS = "RETURN row.span AS span, elementId(n) AS id, n[$prop] AS name, labels(n) AS labels, COUNT { (n)--() } AS degree"


class ProfileLinker:
    """Links a question's word spans to nodes of a profiled graph (:class:`sgr.graph.profile.GraphProfile`) by each
    entity label's naming property (``title``, ``name`` …).

    A span matches a node when both normalise to the same text (:func:`sgr.core.text.normalize`: case, punctuation
    and articles ignored, so "the matrix" names *The Matrix*). Candidates come from a full-text index on the naming
    property when the database has one (``sgr profile index --yes``), else from a scan of the label comparing
    lower-cased names. The longest spans win; spans may not overlap; ties between nodes of one name go to the one
    written as in the question (MetaQA's tag "ben whishaw" against the actor "Ben Whishaw"), then to the one with
    most relationships."""

    def __init__(self, store: GraphStore, profile: GraphProfile, *, max_len: int = 8) -> None:
        self.store = store
        self.profile = profile
        self.max_len = max_len
        self.indexes = fulltext_indexes(store)

    def spans(self, question: str) -> list[tuple[int, int, str]]:
        """(start, end, text) of every word n-gram with a word outside the stop words, longest first; a span whose
        words the question joins by other characters than spaces ("Face/Off", "50/50") also as written."""
        raw = question_words(question)
        text = question.replace("[", " ").replace("]", " ")
        cuts, at = [], 0
        for w in raw:
            at = text.index(w, at)
            cuts.append((at, at + len(w)))
            at += len(w)
        out = []
        for words in (raw, [possessive(w) for w in raw]):  # "The Slugger's Wife", and "Tom Hanks's" → "Tom Hanks"
            for n in range(min(self.max_len, len(words)), 0, -1):
                for i in range(len(words) - n + 1):
                    gram = words[i:i + n]
                    if not any(w.lower() not in STOPWORDS for w in gram):
                        continue
                    written = text[cuts[i][0]:cuts[i + n - 1][1]] if words is raw else ""
                    for t in [" ".join(gram)] + ([written] if written and written.split() != gram else []):
                        if (i, i + n, t) not in out:
                            out.append((i, i + n, t))
        return sorted(out, key=lambda sp: sp[0] - sp[1])  # longest first (stable: as written before possessives)

    def matches(self, texts: Sequence[str]) -> list[dict]:
        """Nodes whose naming property normalises to one of ``texts`` (rows with span, id, name, labels, degree)."""
        wanted = {normalize(t): t for t in texts if normalize(t)}
        rows: list[dict] = []
        for lp in self.profile.entity_labels():
            prop, label = lp.name_property, quote_identifier(lp.label)
            index = self.indexes.get((lp.label, prop))
            if index is not None:
                batch = [{"span": t, "q": q} for t in wanted.values() if (q := lucene_phrase(t))]
                found = self.store.read(
                    f"UNWIND $rows AS row CALL db.index.fulltext.queryNodes($index, row.q, {{limit: 20}}) "
                    f"YIELD node AS n WHERE n:{label} {_NODE_ROWS}", {"rows": batch, "index": index, "prop": prop})
            else:
                batch = [{"span": t, "low": low} for t in dict.fromkeys(texts) if normalize(t)
                         for low in (t.lower(), "the " + t.lower(), "a " + t.lower())]
                found = self.store.read(
                    f"MATCH (n:{label}) WHERE toLower(toString(n[$prop])) IN $lows "
                    f"WITH n, toLower(toString(n[$prop])) AS low UNWIND $rows AS row "
                    f"WITH n, row WHERE low = row.low {_NODE_ROWS}",
                    {"rows": batch, "lows": sorted({b["low"] for b in batch}), "prop": prop})
            rows += [r for r in found if r["name"] is not None and normalize(str(r["name"])) == normalize(r["span"])]
        return rows

    @staticmethod
    def bracketed(question: str) -> list[tuple[int, int]]:
        """Word ranges of the mentions marked with brackets, MetaQA style (``what films did [Tom Hanks] star in``)."""
        out, at = [], 0
        for i, part in enumerate(re.split(r"[\[\]]", question)):
            n = len(question_words(part))
            if i % 2 and n:
                out.append((at, at + n))
            at += n
        return out if "[" in question else []

    def link_given(self, question: str, topics: Sequence[str]) -> list[LinkedEntity]:
        """Topic entities a dataset gives (MetaQA's bracketed mention): each linked by name, its span being where the
        question names it. Falls back to :meth:`link_question` when none links."""
        words = [w.lower() for w in question_words(question)]
        rows: dict[str, list[dict]] = {}
        for r in self.matches(list(topics)):
            rows.setdefault(normalize(r["span"]), []).append(r)
        out = []
        for topic in topics:
            found = rows.get(normalize(topic))
            if not found:
                continue
            tw = [w.lower() for w in question_words(topic)]
            at = next((i for i in range(len(words) - len(tw) + 1) if words[i:i + len(tw)] == tw), 0)
            out.append(_best_match(topic, found, "given", (at, at + len(tw))))
        return _dedupe(out) or self.link_question(question)

    def link_question(self, question: str, max_entities: int = 3) -> list[LinkedEntity]:
        """The named nodes of ``question``: longest spans first, no two overlapping, at most ``max_entities``; only
        the bracketed mentions when the question marks some (MetaQA: "what does [X] star in" is not about the film
        *The Star*)."""
        marked = self.bracketed(question)
        spans = [sp for sp in self.spans(question) if not marked or (sp[0], sp[1]) in marked]
        by_text: dict[str, list[dict]] = {}
        for r in self.matches([t for _, _, t in spans]):
            by_text.setdefault(normalize(r["span"]), []).append(r)
        taken: list[tuple[int, int]] = []
        out: list[LinkedEntity] = []
        for i, j, text in spans:  # longest first
            rows = by_text.get(normalize(text))
            if not rows or any(i < b and a < j for a, b in taken):
                continue
            taken.append((i, j))
            out.append(_best_match(text, rows, "exact", (i, j)))
        out.sort(key=lambda e: e.span)
        return _dedupe(out)[:max_entities]


def _best_match(text: str, rows: list[dict], method: str, span: tuple[int, int]) -> LinkedEntity:
    """The node of ``rows`` (:meth:`ProfileLinker.matches`) that ``text`` names: the one written as in the question
    first, then the one with most relationships."""
    best = max(rows, key=lambda r: (str(r["name"]) == text, r["degree"], r["id"]))
    return LinkedEntity(text, best["id"], str(best["name"]), 1.0, method, degree=best["degree"],
                        labels=list(best["labels"]), span=span)
