"""Find the graph nodes that a dataset's entity strings denote.

Datasets name topic entities and answers by name (MetaQA, the WebQSP slice), sometimes also by
Freebase MID (``q_entity_mid``). In sgr's graph model an entity's ``id`` is its MID when it has one
and its name otherwise, so a string is looked up first as an ``id`` (unique-constraint index), and,
when that finds nothing, as an exact ``name`` through the full-text index ``entity_name`` (a phrase
query, then an exact equality filter, so the fuzzy index never decides a match).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from neo4j.exceptions import Neo4jError

from sgr.graph.store import GraphStore

BY_ID = "UNWIND $keys AS k MATCH (e:Entity {id: k}) RETURN k, e.id AS id"
BY_NAME = ("UNWIND $rows AS row "
           "CALL db.index.fulltext.queryNodes('entity_name', row.q, {limit: 50}) YIELD node "
           "WHERE node.name = row.name RETURN row.name AS k, node.id AS id")

_LUCENE_SPECIAL = re.compile(r'([\\"])')


def lucene_phrase(text: str) -> str | None:
    """A Lucene phrase query for ``text``; ``None`` when it has no word characters to search for."""
    if not re.search(r"\w", text):
        return None
    return '"' + _LUCENE_SPECIAL.sub(r"\\\1", text) + '"'


def resolve_entities(store: GraphStore, keys: Iterable[str], by_name: bool = True,
                     batch_size: int = 2000) -> dict[str, list[str]]:
    """Map each string in ``keys`` to the ids of the ``:Entity`` nodes it denotes (``[]`` if none)."""
    wanted = list(dict.fromkeys(k for k in keys if k))
    found: dict[str, list[str]] = {k: [] for k in wanted}
    for i in range(0, len(wanted), batch_size):
        for row in store.read(BY_ID, {"keys": wanted[i:i + batch_size]}):
            found[row["k"]].append(row["id"])
    if not by_name:
        return found
    missing = [{"name": k, "q": q} for k in wanted if not found[k] and (q := lucene_phrase(k))]
    for i in range(0, len(missing), batch_size):
        chunk = missing[i:i + batch_size]
        try:
            rows = store.read(BY_NAME, {"rows": chunk})
        except Neo4jError:  # one unparsable phrase fails the batch: retry one by one, skip failures
            rows = []
            for one in chunk:
                try:
                    rows.extend(store.read(BY_NAME, {"rows": [one]}))
                except Neo4jError:
                    continue
        for row in rows:
            if row["id"] not in found[row["k"]]:
                found[row["k"]].append(row["id"])
    return found
