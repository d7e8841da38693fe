"""Inverse relations of the loaded graph: the pairs of relationship types that state one fact from its two ends.

Freebase states each fact twice, once from each end: ``education.education.student`` (CVT → person) and
``people.person.education`` (person → CVT) are one edge read both ways, as are ``location.location.containedby`` and
``location.location.contains``. A subgraph cut from Freebase (a WebQSP slice, an N-Triples sample) keeps one or the
other for each fact, so the walk ``program → regular_cast → CVT → actor`` reaches only the CVTs whose actor edge
happens to be stored under ``tv.regular_tv_appearance.actor``; the others carry ``tv.tv_actor.starring_roles``. A
compiled relation path that accepts either name at such a step (:func:`cypher.compile.pattern`) returns the whole
answer set.

The pairs are read from the graph itself, not from a schema file, in two kinds:

* **CVT pairs** — two types joining the same CVT and entity (in either direction). A role edge of a CVT means
  the same whichever way it is stored (its two ends have different types), so a step walks both names both ways.
* **Entity pairs** — ``(a)-[r]->(b)`` and ``(b)-[r⁻¹]->(a)`` between two entities. Here the two ends may have one
  type (``containedby``/``contains``, ``children``/``parents``), so a step walks ``r`` in its direction or ``r⁻¹``
  against it, never the converse (``directed``).

A pair is kept when each type is the other's single most frequent partner (a mutual best match over both kinds'
counts) and their joint facts are at least :data:`MIN_SHARE` of the more frequent type's edges: narrower and
broader facts on the same nodes (``official_language`` within ``languages_spoken``), the rare CVT whose two roles
fall on one entity, and a stray edge or two (MetaQA's one film that is "directed_by" a writer it is "written_by";
the WebQSP slice's 4 of 1,307 ``people.person.nationality`` edges met by ``book.written_work.subjects``) pair
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sgr.graph.stats import relationship_counts
from sgr.graph.store import GraphStore

#: nodes read when finding the pairs (a Freebase-scale graph is sampled, not scanned)
MAX_NODES = 200_000
#: the joint facts of a pair, as a share of the more frequent type's edges, below which it pairs nothing
MIN_SHARE = 0.01

_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], "InverseRelations"] = {}

CVT_PAIRS_QUERY = (
    "MATCH (c:CVT) WITH c LIMIT $cap "
    "MATCH (c)-[r1]-(e:Entity)-[r2]-(c) WHERE NOT e:CVT AND type(r1) < type(r2) "
    "RETURN type(r1) AS a, type(r2) AS b, count(DISTINCT [elementId(c), elementId(e)]) AS n")
ENTITY_PAIRS_QUERY = (
    "MATCH (a:Entity) WHERE NOT a:CVT WITH a LIMIT $cap "
    "MATCH (a)-[r1]->(b:Entity)-[r2]->(a) WHERE NOT b:CVT AND type(r1) < type(r2) "
    "RETURN type(r1) AS a, type(r2) AS b, count(*) AS n")


@dataclass(frozen=True)
class InverseRelations:
    """``pairs``: each paired relation → its inverse (both ways); ``directed``: those of entity pairs, walked in
    their own direction or their inverse's against it (module docstring)."""

    pairs: dict[str, str] = field(default_factory=dict)
    directed: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs) // 2

    def get(self, relation: str) -> str | None:
        return self.pairs.get(relation)

    def step(self, relation: str, direction: str) -> tuple[str, str | None]:
        """One step written once for both names: ``(first name of the pair, direction read from it)`` for a directed
        pair, ``(first name, None)`` for a CVT pair (either direction), the step itself otherwise."""
        inverse = self.pairs.get(relation)
        if inverse is None:
            return relation, direction
        first = min(relation, inverse)
        if relation not in self.directed:
            return first, None
        return first, direction if relation == first else {"out": "in", "in": "out"}[direction]

    def walk(self, seed: str, steps: Sequence[tuple[str, str]]) -> tuple[str, tuple[tuple[str, str | None], ...]]:
        """A walk from ``seed`` written once for both names (:meth:`step` for each step): two walks of one fact path
        under a relation's two names get the same key."""
        return seed, tuple(self.step(r, d) for r, d in steps)

    def canonical(self, relations: Sequence[str]) -> tuple[str, ...]:
        """A relation path with each paired relation written as the first of its pair by name, so two paths that
        walk one fact under its two names compare equal."""
        return tuple(min(r, self.pairs[r]) if r in self.pairs else r for r in relations)

    def names_of(self, relations: Iterable[str]) -> dict[str, str]:
        """Both names of each pair that ``relations`` meet → the name :meth:`canonical` writes them as."""
        return {name: min(r, self.pairs[r]) for r in relations if r in self.pairs for name in (r, self.pairs[r])}


NO_INVERSES = InverseRelations()


def mutual_best(pairs: Sequence[tuple[str, str, int]]) -> dict[str, str]:
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
        if len(who) == 1 and best.get(who[0], (0, []))[1] == [x]:
            out[x] = who[0]
    return out


def find_inverses(cvt_pairs: Sequence[tuple[str, str, int]], entity_pairs: Sequence[tuple[str, str, int]],
                  edges: Mapping[str, int]) -> InverseRelations:
    """The mutual best pairs over both kinds' counts ``(a, b, n)`` whose ``n`` is at least :data:`MIN_SHARE` of the
    more frequent type's ``edges``; a pair is directed when its count came from entity pairs."""
    counts: dict[tuple[str, str], list[int]] = {}
    for kind, rows in enumerate((cvt_pairs, entity_pairs)):
        for a, b, n in rows:
            counts.setdefault((a, b), [0, 0])[kind] += n
    best = mutual_best([(a, b, sum(n)) for (a, b), n in counts.items()])
    size = {r: edges.get(r, 0) for r in best}
    joint = {r: counts[(min(r, inv), max(r, inv))] for r, inv in best.items()}
    pairs = {r: inv for r, inv in best.items() if sum(joint[r]) >= MIN_SHARE * max(size[r], size[inv])}
    return InverseRelations(pairs, frozenset(r for r in pairs if joint[r][1] > joint[r][0]))


def inverse_relations(store: GraphStore, graph_version: str | None = None) -> InverseRelations:
    """The inverse of each relationship type that has one (module docstring), found once per graph version."""
    version = graph_version or store.graph_version()
    key = (store.uri, version)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is None:
        rows = [[(r["a"], r["b"], int(r["n"])) for r in store.read(q, {"cap": MAX_NODES})]
                for q in (CVT_PAIRS_QUERY, ENTITY_PAIRS_QUERY)]
        hit = find_inverses(*rows, edges=relationship_counts(store))
        with _LOCK:
            _CACHE[key] = hit
    return hit
