"""Deadlock-free partitioning of relationship rows for concurrent write transactions.

Creating a relationship locks both of its end nodes, so two transactions that share a node (a
dense hub such as a country or a CVT type) can deadlock; Neo4j then aborts one and the driver
retries it a second later. To avoid that, every node gets a bucket ``b(n) = crc32(id) mod P`` with
``P = 2 × workers`` buckets, and a row ``(h, r, t)`` belongs to the unordered bucket pair
``{b(h), b(t)}``. The pairs are scheduled with the round-robin tournament ("circle") method: in
each of the ``P − 1`` rounds the ``P`` buckets are split into ``P/2`` disjoint pairs, so the jobs
of one round touch disjoint sets of nodes and run concurrently without any lock conflict; rounds
run one after the other. A pair ``{i, i}`` (both ends in one bucket) joins the job of round 0 that
holds bucket ``i``. Every pair occurs in exactly one round (a round-robin covers all of them).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence


def bucket(entity_id: str, buckets: int) -> int:
    return zlib.crc32(entity_id.encode("utf-8")) % buckets


def round_robin(buckets: int) -> list[list[tuple[int, int]]]:
    """``buckets − 1`` rounds of ``buckets / 2`` disjoint pairs covering every pair once (even ``buckets``)."""
    if buckets < 2 or buckets % 2:
        raise ValueError("round_robin needs an even number of buckets, at least 2")
    ring = list(range(buckets))
    rounds = []
    for _ in range(buckets - 1):
        rounds.append([tuple(sorted((ring[i], ring[buckets - 1 - i]))) for i in range(buckets // 2)])
        ring = [ring[0], ring[-1], *ring[1:-1]]  # keep the first, rotate the rest
    return rounds  # type: ignore[return-value]


def partition_rounds(rows: Sequence[tuple[str, str, str]], workers: int) -> list[list[list[tuple[str, str, str]]]]:
    """Rounds of jobs (lists of rows); the jobs of one round share no end node (see module doc)."""
    buckets = 2 * max(workers, 1)
    cells: dict[tuple[int, int], list[tuple[str, str, str]]] = {}
    for row in rows:
        bh, bt = bucket(row[0], buckets), bucket(row[2], buckets)
        cells.setdefault((bh, bt) if bh <= bt else (bt, bh), []).append(row)
    out = []
    for n, pairs in enumerate(round_robin(buckets)):
        jobs = []
        for i, j in pairs:
            job = list(cells.get((i, j), ()))
            if n == 0:
                job += cells.get((i, i), []) + cells.get((j, j), [])
            if job:
                jobs.append(job)
        if jobs:
            out.append(jobs)
    return out
