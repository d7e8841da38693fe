"""Which of a question's mentions is its topic: every span that names a node, scored, the best first.

"what currency does japan use?" names two nodes — *Currency* and *Japan* — and only one is what the question is
about. :func:`mention_candidates` finds every (span, node) pair in a few batched queries (each span as an id and as a
full-text phrase, one fuzzy query of the question's words; spans are word n-grams, their possessive-free forms, the
parts of hyphenated words (unless the whole word names a node: "Austria-Hungary"), quoted titles and a few short
names, :data:`sgr.core.lexicon.NAME_ALIASES`);
:func:`name_match` says how a span names a node: the whole name ("Japan"), a part of it ("Portuguese" → *Portuguese
Language*, "Celtics" → *Boston Celtics*), or a near spelling. :func:`featurize` describes each pair by evidence that
does not depend on one dataset:

* how well the span names the node: similarity, exact or not, the share of the name's words it covers, quoted;
* the span: its length, and how many names hold its words (``span_hits``: "Battle" is in many names, "Vicksburg" in
  one);
* where the span stands: right after "what/which (kind of)" it is the answer's type, not the topic (``TYPE``);
  right after another named span ("Vienna, Austria") it qualifies that one (and that one comes right before it);
  inside a longer span that names a whole node ("Peru" in "the Cabinet of Peru") it is part of that name, and so is
  a place right after another that an edge joins it to ("Austria" in "Vienna, Austria", :func:`graph_context`);
* capitalisation, where the question is cased at all, and whether the span is written exactly as the name
  (``verbatim``: MetaQA's tag "famke janssen" against the actor *Famke Janssen*);
* the graph: how well the node's relationship types match the question (the relation retriever's scores — the
  question's relations as evidence), its degree, and whether it is a *type node* (most of its edges are type
  statements, :data:`sgr.core.lexicon.TYPE_RELATIONS`); both against the other nodes the same span names
  (``namesake_rel``, ``namesake_degree``); how many of the question's other spans name a node within two edges of
  this one (``coherence``: the New York *Giants*, linked to the *Super Bowl* the question names);
* a demonym's place ("British" → *United Kingdom*, :data:`sgr.core.lexicon.DEMONYMS`), a candidate of its own
  (``demonym``).

A :class:`LinkScorer` (a conditional logit over each question's candidates, fitted on dev questions by
``bench/linking.py`` and shipped as ``sgr/assets/linker.json``) turns the features into P(topic | span, node);
without the file the scorer falls back to the matched share of the name, the relation evidence and the span length
(:func:`fallback_score`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from neo4j.exceptions import Neo4jError

from sgr.core.lexicon import DEMONYMS, NAME_ALIASES, STOPWORDS, TYPE, TYPE_RELATIONS
from sgr.core.logistic import LogisticScorer, asset_file, fit_listwise, load_scorer
from sgr.core.text import lucene_phrase, lucene_terms, normalize
from sgr.graph.store import EVIDENCE_REL, GraphStore

ASSET = "linker.json"
#: The features of one (span, node) pair, in order (module docstring).
FEATURES = ("match", "exact", "coverage", "quoted", "span_words", "span_hits", "after_wh", "follows_mention",
            "precedes_mention", "inside_named", "capitalised", "cased_question", "rel_match", "rel_sum", "log_degree",
            "type_node", "position", "coherence", "verbatim", "namesake_rel", "namesake_degree", "demonym")
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
    method: str  # "id" | "exact" | "normalised" | "partial" | "fulltext" | "alias" | "demonym"
    coverage: float = 1.0  # the share of the node name's words the span covers
    features: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    relation_types: list[str] = field(default_factory=list)
    degree: int = 0
    qualifies: bool = False  # "Austria" in "Vienna, Austria" (:func:`graph_context`)

    def overlaps(self, other: "MentionCandidate") -> bool:
        return self.start < other.end and other.start < self.end


def question_words(question: str) -> list[str]:
    """The question's words as spans are cut from them (brackets dropped, edge dots and quotes stripped)."""
    words = _WORD.findall(question.replace("[", " ").replace("]", " "))
    return [w.strip(".'") for w in words if w.strip(".'")]


def possessive(word: str) -> str:
    """``Hanks's`` → ``Hanks``, ``Wachowskis'`` → ``Wachowskis`` (other words as they are)."""
    for tail in ("'s", "’s"):
        if word.lower().endswith(tail) and len(word) > len(tail):
            return word[:-len(tail)]
    return word[:-1] if word.endswith("'") and len(word) > 1 else word


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


#: Quoted titles and sayings ("who said \u201cYes we can!\u201d"): a span of any length.
_QUOTED = re.compile(r'"([^"]{2,})"|\u201c([^\u201d]{2,})\u201d')
#: Per span, the most-connected nodes whose name holds the span's words (a part of the name) that stay candidates.
PARTIAL_PER_SPAN = 5


def quoted_spans(question: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each quoted part of the question, in the word offsets of :func:`question_words`."""
    text = question.replace("[", " ").replace("]", " ")
    out = []
    for m in _QUOTED.finditer(text):
        i = len(question_words(text[:m.start()]))
        inner = question_words(m.group(1) or m.group(2))
        if inner:
            out.append((i, i + len(inner), " ".join(inner)))
    return out


def hyphen_parts(words: Sequence[str]) -> list[tuple[tuple[int, int, str], float]]:
    """The parts of hyphenated words ("Portuguese-speaking" → "Portuguese"), each spanning its whole word, with the
    share of the word's parts it is (½ here)."""
    return [((i, i + 1, part), 1 / len(w.split("-"))) for i, w in enumerate(words) if "-" in w
            for part in w.split("-") if len(part) > 1 and part.lower() not in STOPWORDS]


@dataclass
class NameMatch:
    """How a span names a node: ``match`` the similarity of the span to the (part of the) name it matches,
    ``coverage`` the share of the name's words the span covers, ``method`` exact / normalised / partial / fulltext."""

    match: float
    coverage: float
    method: str


def name_match(span: str, name: str, min_similarity: float = 0.85) -> NameMatch | None:
    """Whether ``span`` names ``name``: the same text; the same normalised text; the name's words holding the span's
    words in a row ("Portuguese" in *Portuguese Language*, "Celtics" in *Boston Celtics*); a near spelling of the
    whole name or, for one word, of one of its words ("Iclandic" in *Icelandic Language*); else None."""
    sn, n = normalize(span), normalize(name)
    if not sn or not n:
        return None
    if sn == n:
        return NameMatch(1.0, 1.0, "exact" if span == name else "normalised")
    st, nt = sn.split(), n.split()
    k = len(st)
    if any(nt[i:i + k] == st for i in range(len(nt) - k + 1)):
        return NameMatch(1.0, k / len(nt), "partial")
    if abs(len(sn) - len(n)) <= max(3, len(n) // 3):
        sim = SequenceMatcher(None, sn, n).ratio()
        if sim >= min_similarity:
            return NameMatch(sim, 1.0, "fulltext")
    if k == 1 and len(sn) >= 5 and len(nt) > 1:
        sim = max(SequenceMatcher(None, sn, t).ratio() for t in nt)
        if sim >= min_similarity:
            return NameMatch(sim, 1 / len(nt), "fulltext")
    return None


def mention_candidates(store: GraphStore, question: str, *, max_len: int = 6, fulltext_limit: int = 80,
                       phrase_limit: int = 30, min_similarity: float = 0.85) -> list[MentionCandidate]:
    """Every (span, node) pair the question names (module docstring), with each node's relationship types and
    degree read once.

    Nodes come from three batched lookups: each span as an ``id``; each span as a full-text phrase (the nodes whose
    name holds the span's words, ``phrase_limit`` per span); and one fuzzy query of the question's content words
    (misspellings). :func:`name_match` says how each span names each node found; of the nodes a span only names a
    part of, the :data:`PARTIAL_PER_SPAN` most connected stay."""
    words = question_words(question)
    grams = spans(words, max_len)
    parts = hyphen_parts(words)
    more = spans([possessive(w) for w in words], max_len) + quoted_spans(question) + [g for g, _ in parts]
    more += [(i, i + 1, w.upper()) for i, w in enumerate(words[1:], 1)  # "the us": the country, not the pronoun
             if words[i - 1].lower() == "the" and w.upper() in NAME_ALIASES and w.lower() not in NAME_ALIASES]
    grams += [g for g in more if g not in grams]
    part_share = dict(parts)  # a part of a hyphenated word names that share of what the question wrote
    if not grams:
        return []
    texts = sorted({t for _, _, t in grams})
    by_text: dict[str, list[tuple[int, int]]] = {}
    for i, j, t in grams:
        by_text.setdefault(t, []).append((i, j))
    found: dict[tuple[int, int, str], MentionCandidate] = {}

    def add(i: int, j: int, text: str, node_id: str, name: str | None, m: NameMatch) -> None:
        m = NameMatch(m.match, m.coverage * part_share.get((i, j, text), 1.0), m.method)
        key = (i, j, node_id)
        if key not in found or (found[key].match, found[key].coverage) < (m.match, m.coverage):
            found[key] = MentionCandidate(text, i, j, node_id, name, m.match, m.method, coverage=m.coverage)

    for r in store.read("UNWIND $t AS t MATCH (e:Entity {id: t}) RETURN t, e.id AS id, e.name AS name", {"t": texts}):
        for i, j in by_text[r["t"]]:
            add(i, j, r["t"], r["id"], r["name"], NameMatch(1.0, 1.0, "id"))
    nodes: dict[str, tuple[str, int]] = {}  # id -> (name, degree)
    phrase_hits: dict[str, list[str]] = {}  # span text -> ids its phrase query found
    alias = {t: NAME_ALIASES[t.replace(".", "")] for t in texts if t.replace(".", "") in NAME_ALIASES}
    rows = [{"t": t, "q": q} for t in texts if (q := lucene_phrase(alias.get(t, t)))]
    demonym = {t: DEMONYMS[t.lower()] for t in texts if t.lower() in DEMONYMS}  # "British": also United Kingdom
    rows += [{"t": p, "q": q} for p in sorted(set(demonym.values()) - set(texts)) if (q := lucene_phrase(p))]
    for r in _read_or_none(store, "UNWIND $rows AS row CALL db.index.fulltext.queryNodes('entity_name', row.q, "
                           "{limit: $k}) YIELD node WHERE node.name IS NOT NULL RETURN row.t AS t, node.id AS id, "
                           f"node.name AS name, {_DEGREE} AS degree", {"rows": rows, "k": phrase_limit}):
        nodes[r["id"]] = (r["name"], r["degree"])
        phrase_hits.setdefault(r["t"], []).append(r["id"])
    content = [w for w in words if w.lower() not in STOPWORDS and len(w) > 1]
    query = lucene_terms(" ".join(content)) if content else ""
    if query:
        for r in _read_or_none(store, "CALL db.index.fulltext.queryNodes('entity_name', $q) YIELD node "
                               f"WHERE node.name IS NOT NULL RETURN node.id AS id, node.name AS name, {_DEGREE} "
                               "AS degree LIMIT $k", {"q": query, "k": fulltext_limit}):
            nodes[r["id"]] = (r["name"], r["degree"])
    fuzzy_ids = sorted(set(nodes) - {i for ids in phrase_hits.values() for i in ids})
    for t in texts:
        partial: list[tuple[int, str, NameMatch]] = []
        inner = [i for sub in _sub_spans(t) for i in phrase_hits.get(sub, [])]  # "Stelly McBeam": McBeam's nodes
        for node_id in dict.fromkeys(phrase_hits.get(t, []) + inner + fuzzy_ids):
            name, degree = nodes[node_id]
            m = name_match(alias.get(t, t), name, min_similarity)
            if m is None or (m.method == "partial" and node_id not in phrase_hits.get(t, [])):
                continue
            if t in alias:
                m.method = "alias"
            if m.coverage < 1.0:
                partial.append((degree, node_id, m))
                continue
            for i, j in by_text[t]:
                add(i, j, t, node_id, name, m)
        for degree, node_id, m in sorted(partial, key=lambda p: (-p[0], p[1]))[:PARTIAL_PER_SPAN]:
            for i, j in by_text[t]:
                add(i, j, t, node_id, nodes[node_id][0], m)
        for node_id in phrase_hits.get(demonym.get(t, ""), []):  # the place the demonym names, by its whole name
            if normalize(nodes[node_id][0]) == normalize(demonym[t]):
                for i, j in by_text[t]:
                    add(i, j, t, node_id, nodes[node_id][0], NameMatch(1.0, 1.0, "demonym"))
    named_words = {(c.start, c.end) for c in found.values() if "-" in c.span and _named(c)}  # "Austria-Hungary"
    cands = [c for c in found.values()  # a part of a hyphenated word that names a node wholly is not a mention
             if not ((c.start, c.end) in named_words and (c.start, c.end, c.span) in part_share)]
    if cands:
        profile = store.read(
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) "
            "CALL (e) { MATCH (e)-[r]-() WHERE NOT type(r) STARTS WITH 'SGR_' WITH r LIMIT $cap "
            "  RETURN collect(type(r)) AS rels } "
            f"RETURN e.id AS id, rels, {_DEGREE.replace('node', 'e')} AS degree",
            {"ids": sorted({c.id for c in cands}), "cap": 200})
        info = {r["id"]: (r["rels"], r["degree"]) for r in profile}
        quoted = {(i, j) for i, j, _ in quoted_spans(question)}
        for c in cands:
            c.features["span_hits"] = math.log1p(len(phrase_hits.get(c.span, [])))
            rels, c.degree = info.get(c.id, ([], 0))
            c.relation_types = list(dict.fromkeys(rels))
            c.features["type_node"] = (sum(r in TYPE_RELATIONS for r in rels) / len(rels)) if rels else 0.0
            c.features["quoted"] = float((c.start, c.end) in quoted)
            c.features["demonym"] = float(c.method == "demonym")
        graph_context(store, cands)
    return cands


def _named(c: MentionCandidate) -> bool:
    """The span names the whole node (not a part of its name, not a near spelling)."""
    return c.coverage == 1.0 and c.match == 1.0


def graph_context(store: GraphStore, cands: Sequence[MentionCandidate]) -> None:
    """What the graph says between the question's mentions (:func:`connections`):

    * ``qualifies`` (not a feature of its own): the span comes right after a span naming a whole node (a comma
      between them allowed) and an edge joins the two nodes — "Vienna, Austria": *Austria* qualifies *Vienna*, as a
      part of the place's written name (Freebase names *Pine Hills, Atlanta*); :func:`featurize` counts it as
      ``inside_named``, like "Peru" in "the Cabinet of Peru";
    * ``coherence``: how many of the question's other spans (not overlapping this one) name a whole node (a near
      spelling too: "super bowls") within two edges of this node — the New York, not the San Francisco, *Giants*
      are linked to the *Super Bowl* the question also names (entity coherence; at most 3)."""
    anchors = [o for o in cands if o.coverage == 1.0 and o.match >= ANCHOR_MATCH]
    pairs = {tuple(sorted((c.id, o.id))) for c in cands for o in anchors if c.id != o.id and not c.overlaps(o)}
    hops = connections(store, sorted(pairs), {c.id: c.degree for c in cands})
    for c in cands:
        near = {o.id: hops.get(tuple(sorted((c.id, o.id))), 0) for o in anchors if o.id != c.id and not c.overlaps(o)}
        c.qualifies = any(o.end == c.start and _named(o) and near.get(o.id) == 1 for o in anchors)
        spans_near = {(o.start, o.end) for o in anchors if near.get(o.id, 0) in (1, 2)}
        c.features["coherence"] = float(min(3, len(spans_near)))


#: The least similarity of a span to a whole name for it to count in ``coherence`` (:func:`graph_context`).
ANCHOR_MATCH = 0.9
#: Per node, the neighbours :func:`connections` reads to find two-edge links (a hub's first ones only).
NEIGHBOUR_CAP = 200


def connections(store: GraphStore, pairs: Sequence[tuple[str, str]], degree: Mapping[str, int], *,
                via_cvt: bool = False) -> dict[tuple[str, str], int]:
    """For each pair of node ids, 1 when an edge joins them, 2 when a node between them does (among the first
    :data:`NEIGHBOUR_CAP` neighbours of the less connected one), and, with ``via_cvt``, 3 when two nodes do, one of
    them a CVT (an event's node between the topic and the answer: *Logan Lerman* → performance → *3:10 to Yuma* →
    *Chinese language*); absent when none. sgr's own ``SGR_*`` links are not data. One batched read."""
    if not pairs:
        return {}
    rows = [{"a": a, "b": b} if degree.get(a, 0) <= degree.get(b, 0) else {"a": b, "b": a} for a, b in pairs]
    three = ("any(m IN near WHERE (m:CVT AND EXISTS { (m)--(:Entity)--(b) }) OR EXISTS { (m)--(:CVT)--(b) })"
             if via_cvt else "false")
    out: dict[tuple[str, str], int] = {}
    for r in store.read(
            "UNWIND $rows AS row MATCH (a:Entity {id: row.a}), (b:Entity {id: row.b}) "
            "CALL (a) { MATCH (a)-[r]-(m:Entity) WHERE NOT type(r) STARTS WITH 'SGR_' "
            "  WITH DISTINCT m LIMIT $cap RETURN collect(m) AS near } "
            "WITH row, b, near, b IN near AS one "
            "WITH row, b, near, one, one OR any(m IN near WHERE EXISTS { "
            "  (m)-[r]-(b) WHERE NOT type(r) STARTS WITH 'SGR_' }) AS two "
            f"RETURN row.a AS a, row.b AS b, one, two, two OR {three} AS three",
            {"rows": rows, "cap": NEIGHBOUR_CAP}):
        if r["three"]:
            out[tuple(sorted((r["a"], r["b"])))] = 1 if r["one"] else 2 if r["two"] else 3
    return out


def _sub_spans(text: str) -> list[str]:
    """The shorter word n-grams inside ``text``."""
    w = text.split()
    return [" ".join(w[i:j]) for i in range(len(w)) for j in range(i + 1, len(w) + 1) if j - i < len(w)]


#: A node's degree less its saved evidence links (``node`` bound).
_DEGREE = f"COUNT {{ (node)--() }} - COUNT {{ (node)-[:{EVIDENCE_REL}]-() }}"


def _read_or_none(store: GraphStore, query: str, params: dict[str, Any]) -> list[dict]:
    """The rows of a full-text query, or none when Lucene cannot parse it (a lost server or a refused login still
    raises, as everywhere else: it is not "no candidate")."""
    try:
        return store.read(query, params)
    except Neo4jError:  # a query Lucene cannot parse finds nothing, as EntityLinker's full-text reads do
        return []


def featurize(question: str, cands: Sequence[MentionCandidate], relation_scores: Mapping[str, float]) -> None:
    """Fill each candidate's :data:`FEATURES` (module docstring)."""
    words = question_words(question)
    n = max(1, len(words))
    cased = any(ch.isupper() for ch in question[1:])
    wh_type = set()
    for m in TYPE.finditer(" ".join(words)):  # word offset of the type word after "what/which (kind of)"
        wh_type.add(len(" ".join(words)[:m.start(2)].split()))
    named = {(c.start, c.end) for c in cands if _named(c)}  # spans that name a whole node
    named_ends = {j for _, j in named}  # "Vienna, Austria": Austria qualifies Vienna
    named_starts = {i for i, _ in named}
    for c in cands:
        span_words = words[c.start:c.end]
        caps = [w[:1].isupper() for k, w in enumerate(span_words) if c.start + k > 0]
        types = c.relation_types
        rel = [relation_scores.get(t, 0.0) for t in types]
        c.features.update({
            "match": c.match, "exact": float(c.method in ("id", "exact", "normalised", "alias")),
            "coverage": c.coverage,
            "span_words": float(c.end - c.start), "after_wh": float(c.start in wh_type),
            "follows_mention": float(c.start in named_ends), "precedes_mention": float(c.end in named_starts),
            "inside_named": float(c.qualifies or any(i <= c.start and c.end <= j and j - i > c.end - c.start
                                                     for i, j in named)),
            "capitalised": (sum(caps) / len(caps)) if caps and cased else 0.0, "cased_question": float(cased),
            "rel_match": max(rel, default=0.0), "rel_sum": 0.1 * sum(rel), "log_degree": math.log1p(c.degree),
            "position": c.start / n, "verbatim": float(c.span == c.name)})
        for key in ("type_node", "quoted", "span_hits", "coherence", "demonym"):
            c.features.setdefault(key, 0.0)
    namesakes(cands)


def namesakes(cands: Sequence[MentionCandidate]) -> None:
    """Among the nodes one span names (two *Giants*, *Super Bowl* and *Super bowl*): each node's relation evidence
    and log degree less the best of them (``namesake_rel``, ``namesake_degree``: 0 for the best, below 0 else)."""
    best: dict[tuple[int, int], tuple[float, float]] = {}
    for c in cands:
        r, d = best.get((c.start, c.end), (-math.inf, -math.inf))
        best[(c.start, c.end)] = (max(r, c.features["rel_match"]), max(d, c.features["log_degree"]))
    for c in cands:
        r, d = best[(c.start, c.end)]
        c.features["namesake_rel"] = c.features["rel_match"] - r
        c.features["namesake_degree"] = c.features["log_degree"] - d


#: P(topic | span, node) = σ(w·z + b): the topic scorer is a :class:`~sgr.core.logistic.LogisticScorer` over
#: :data:`FEATURES` of a candidate's ``features``
LinkScorer = LogisticScorer


def asset_path() -> Path:
    return asset_file(ASSET)


def load_link_scorer(path: str | None = None) -> LinkScorer | None:
    """The topic scorer at ``path`` (default: the shipped one), or None when there is none."""
    return load_scorer(str(path or asset_path()), FEATURES)


def train_link_scorer(groups: Sequence[Sequence[Mapping[str, float]]], labels: Sequence[Sequence[int]], *,
                      c: float = 1.0, provenance: dict[str, Any] | None = None) -> LinkScorer:
    """Fit the topic scorer on each question's candidates' features and 0/1 labels (the node is a gold topic): the
    ranking within a question is what is learned (:func:`~sgr.core.logistic.fit_listwise`)."""
    return fit_listwise(FEATURES, groups, labels, c=c, provenance=provenance)


def fallback_score(features: Mapping[str, float]) -> float:
    """The topic score without a fitted scorer: how much of the name the span matches, then the relation evidence
    and the span's length, less the answer-type position."""
    return (features["match"] * features.get("coverage", 1.0) + 0.5 * features["rel_match"]
            + 0.05 * features["span_words"] - features["after_wh"])


def rank(question: str, cands: list[MentionCandidate], relation_scores: Mapping[str, float],
         scorer: LinkScorer | None = None) -> list[MentionCandidate]:
    """The candidates scored and sorted best first (the learned scorer, else match, relation evidence, length)."""
    featurize(question, cands, relation_scores)
    for c in cands:
        c.score = scorer.score(c.features) if scorer is not None else fallback_score(c.features)
    return best_first(cands)


def best_first(cands: Sequence[MentionCandidate]) -> list[MentionCandidate]:
    """Scored candidates in the linker's order: score, then the longer span, the earlier span, the node id."""
    return sorted(cands, key=lambda c: (-c.score, -(c.end - c.start), c.start, c.id))


#: The least score of a further entity (a conjunction's other entities, :func:`choose`): the lowest threshold whose
#: linked entities are still 0.90 gold topics on the CWQ dev training part (``bench/experiments/linking.md``).
FURTHER_MIN_SCORE = 0.45
#: The least score of a further entity written as a name (capitalised in a cased question) that the graph joins to
#: the topic (:func:`topic_hops`), by how: an edge or a node between them (1, 2), or a CVT and a node (3: the topic's
#: event, the answer, then the entity — "What Chinese language movies featured Logan Lerman?"). Chosen on CWQ dev
#: (``bench/experiments/linking.md``, 2026-11-28): the pair that links every gold topic of the most training-part
#: questions while at least 0.60 of the further entities it links are gold; names only, because the common nouns
#: it also linked ("What *magazine* did …", "the *author* who …") name the answer or the bridge, not a second topic.
JOINED_MIN_SCORE = {1: 0.3, 2: 0.3, 3: 0.15}


def topic_hops(store: GraphStore, ranked: Sequence[MentionCandidate]) -> dict[str, int]:
    """How the graph joins to the topic (the first of ``ranked``; :func:`connections` with CVTs) each candidate
    whose choice the join can change — a name (:func:`choose`) scoring below :data:`FURTHER_MIN_SCORE` but not below
    the least of :data:`JOINED_MIN_SCORE`, its span apart from the topic's: 1, 2 or 3 by node id, absent when the
    graph does not join it. Those are few, so the read stays small on any question."""
    if not ranked:
        return {}
    top, least = ranked[0], min(JOINED_MIN_SCORE.values(), default=FURTHER_MIN_SCORE)
    others = {c.id: c.degree for c in ranked[1:] if c.id != top.id and not c.overlaps(top) and _written_as_name(c)
              and least <= c.score < FURTHER_MIN_SCORE}
    near = connections(store, [(top.id, i) for i in sorted(others)], {**others, top.id: top.degree}, via_cvt=True)
    return {i: hops for i in others if (hops := near.get(tuple(sorted((top.id, i))))) is not None}


def _written_as_name(c: MentionCandidate) -> bool:
    """The question writes the span as a name: every word capitalised, in a question that is cased at all."""
    return c.features.get("capitalised", 0.0) == 1.0


def choose(ranked: Sequence[MentionCandidate], *, max_entities: int = 3, min_score: float = FURTHER_MIN_SCORE,
           joined: Mapping[str, int] | None = None) -> list[MentionCandidate]:
    """The topic (the best candidate) and the further entities: non-overlapping candidates scoring at least
    ``min_score`` (the conjunction's other entities), or :data:`JOINED_MIN_SCORE` when they are written as names and
    the graph joins them to the topic (``joined``: :func:`topic_hops`), one node per span."""
    joined = joined or {}
    out: list[MentionCandidate] = []
    for c in ranked:
        if len(out) >= max_entities:
            break
        least = (min(min_score, JOINED_MIN_SCORE.get(joined.get(c.id, 0), min_score)) if _written_as_name(c)
                 else min_score)
        if out and (c.score < least or any(c.overlaps(o) or c.id == o.id for o in out)):
            continue
        out.append(c)
    return out
