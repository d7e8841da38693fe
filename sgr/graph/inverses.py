"""Inverse relations of the loaded graph: the pairs of relationship types that state one fact from its two ends.

Freebase states each fact of a CVT (mediator) node twice, once from each end: ``education.education.student``
(CVT → person) and ``people.person.education`` (person → CVT) are one edge read both ways, as are
``tv.regular_tv_appearance.actor`` / ``tv.tv_actor.starring_roles``. A subgraph cut from Freebase (a WebQSP slice,
an N-Triples sample) keeps one or the other for each CVT, so the walk ``program → regular_cast → CVT → actor``
reaches only the CVTs whose actor edge happens to be stored under ``tv.regular_tv_appearance.actor``; the others
carry ``tv.tv_actor.starring_roles``. A compiled relation path that accepts either name at such a step
(:func:`cypher.compile.pattern`) returns the whole answer set.

The pairs are read from the graph itself, not from a schema file: two types are inverses when they join the same
CVT and entity (in either direction) and each is the other's most frequent such partner — a mutual best match, so
the rare CVT whose two roles happen to fall on one entity (a film named like its character) pairs nothing.
Entity-to-entity pairs are left out on purpose: there, two types on the same pair of nodes are as often a narrower
and a broader fact (``official_language`` within ``languages_spoken``) as one fact read both ways.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from sgr.graph.store import GraphStore

#: CVT nodes read when finding the pairs (a Freebase-scale graph is sampled, not scanned)
MAX_CVTS = 200_000

_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], dict[str, str]] = {}

PAIRS_QUERY = (
    "MATCH (c:CVT) WITH c LIMIT $cap "
    "MATCH (c)-[r1]-(e:Entity)-[r2]-(c) WHERE NOT e:CVT AND type(r1) < type(r2) "
    "RETURN type(r1) AS a, type(r2) AS b, count(DISTINCT [elementId(c), elementId(e)]) AS n")


def mutual_best(pairs: list[tuple[str, str, int]]) -> dict[str, str]:
    """``{r: inverse(r)}`` (both ways) for the pairs ``(a, b, n)`` where each of a, b is the other's single most
    frequent partner (a tie for the best partner pairs nothing)."""
    best: dict[str, tuple[int, list[str]]] = {}
    for a, b, n in pairs:
        for x, y in ((a, b), (b, a)):
            top, who = best.get(x, (0, []))
            if n > top:
                best[x] = (n, [y])
            elif n == top:
                who.append(y)
    out: dict[str, str] = {}
    for x, (_, who) in best.items():
        if len(who) == 1:
            y = who[0]
            back = best.get(y, (0, []))[1]
            if back == [x]:
                out[x] = y
    return out


def canonical(relations: Sequence[str], inverses: Mapping[str, str]) -> tuple[str, ...]:
    """A relation path with each relation that has an inverse written as the first of the pair by name, so two
    paths that walk one fact under its two names compare equal."""
    return tuple(min(r, inverses[r]) if r in inverses else r for r in relations)


def inverse_relations(store: GraphStore, graph_version: str | None = None) -> dict[str, str]:
    """The inverse of each relationship type that has one (module docstring), found once per graph version."""
    version = graph_version or store.graph_version()
    key = (store.uri, version)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is None:
        rows = store.read(PAIRS_QUERY, {"cap": MAX_CVTS})
        hit = mutual_best([(r["a"], r["b"], int(r["n"])) for r in rows])
        with _LOCK:
            _CACHE[key] = hit
    return dict(hit)
