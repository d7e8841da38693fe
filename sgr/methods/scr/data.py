"""Question subgraphs G_q and step targets for SCR, pulled from Neo4j and cached on disk.

SCR (Lin et al., AAAI 2026, "Preliminary — Reasoning over KGs") works on a question-specific subgraph
G_q ⊆ G "retrieved using entity linking and neighbor extraction", and is trained on "the shortest paths
between topic and answer entities" ("Implementation Details"). This module provides both:

* :func:`fetch_subgraph` — breadth-first, ``hops`` rounds around the topic entities, one Cypher query
  per round (``UNWIND`` over the frontier, a per-node ``LIMIT`` in a ``CALL`` subquery). Capped:

  - a *hub* (degree > ``hub_degree``) that is not a topic entity is kept as a node but not expanded
    (in MetaQA every year/genre/language node is such a hub; no gold path passes *through* one);
  - a topic entity contributes at most ``topic_cap`` neighbours, any other node ``node_cap``;
  - at most ``max_nodes`` nodes; a round expands its frontier in ascending degree order, so the
    specific nodes are expanded before the cap is reached;
  - CVT-aware: a compound-value node (``:CVT``, a MID without a name) does not count as a hop — when
    a round reaches one, its own neighbours are fetched in the same round, so
    ``person -> (position held) -> office`` lies within one hop.

  Edges are kept in their stored direction (they are walked both ways). sgr's own ``SGR_*``
  bookkeeping relationships are ignored.

* :class:`SubgraphCache` — a SQLite file per (graph version, extraction settings) under
  ``cache_dir("scr")``: the key is the sorted topic ids, the value the compressed subgraph. Reruns
  (training, evaluation, benchmarks) skip Neo4j entirely; the graph version
  (:meth:`sgr.graph.store.GraphStore.graph_version`) makes the cache stale when the data changes.

* :func:`shortest_paths` — all shortest topic→answer walks inside G_q (undirected BFS, capped), the
  supervision of the stepwise InfoNCE objective (eq. 10).
"""

from __future__ import annotations

import hashlib
import io
import json
import time
import zlib
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sgr.core.config import cache_dir
from sgr.core.text import normalize
from sgr.graph.store import GraphStore, relation_text
from sgr.llm.cache import KVCache
from sgr.retrieval.entities import EntityLinker
from sgr.core.types import Question

#: Text given to a compound-value (CVT) node, which has no name of its own.
CVT_TEXT = "compound value"
#: Marker appended to a relation's text when an edge is walked against its stored direction.
REVERSE_SUFFIX = " (reverse)"


@dataclass(frozen=True)
class SubgraphConfig:
    """How G_q is cut out of the graph (stored in checkpoints; part of the cache key)."""

    hops: int = 2
    max_nodes: int = 2000
    hub_degree: int = 100
    topic_cap: int = 1000
    node_cap: int = 100
    cvt_aware: bool = True

    def key(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]


@dataclass
class ScrSubgraph:
    """G_q: nodes (local index = position), stored-direction edges ``(head, rel, tail)`` as local indices.

    ``depth[i]`` is the round in which node ``i`` was reached (0 for topic entities); ``topics`` are
    the local indices of the topic entities found in the graph.
    """

    node_ids: list[str]
    names: list[str | None]
    cvt: np.ndarray  # bool (n,)
    depth: np.ndarray  # int8 (n,)
    edges: np.ndarray  # int32 (E, 3): head, relation index, tail
    relations: list[str]
    topics: list[int]
    truncated: bool = False
    seconds: float = 0.0  # time spent in Neo4j building it (0 when it came from the cache)
    _adj: list[list[tuple[int, int, int]]] | None = field(default=None, repr=False, compare=False)
    _csr: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)
    _index: dict[str, int] | None = field(default=None, repr=False, compare=False)
    _digest: str | None = field(default=None, repr=False, compare=False)

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[0])

    def text(self, i: int) -> str:
        """The text of node ``i`` encoded by the frozen encoder (eq. 2) and written into q_i (eq. 8)."""
        if self.names[i]:
            return str(self.names[i])
        return CVT_TEXT if self.cvt[i] else self.node_ids[i]

    def label(self, i: int) -> str:
        """What people see for node ``i`` (name, else id)."""
        return self.names[i] or self.node_ids[i]

    def index_of(self, node_id: str) -> int | None:
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.node_ids)}
        return self._index.get(node_id)

    def adjacency(self) -> list[list[tuple[int, int, int]]]:
        """``adj[u]`` = ``[(v, edge, direction)]``; direction 0 walks the edge as stored (u is its head), 1 against it."""
        if self._adj is None:
            self._adj = [self.neighbours(u) for u in range(self.num_nodes)]
        return self._adj

    def neighbours(self, u: int) -> list[tuple[int, int, int]]:
        """``adjacency()[u]`` without building every node's list (the beam search reads a few nodes of a large G_q)."""
        if self._adj is not None:
            return self._adj[u]
        if self._csr is None:
            # each edge j as (head, tail, j, 0) and, unless a loop, (tail, head, j, 1); a stable sort by the first
            # column keeps every node's entries in edge order
            h, t = self.edges[:, 0].astype(np.int64), self.edges[:, 2].astype(np.int64)
            j = np.arange(self.num_edges, dtype=np.int64)
            back = h != t
            rows = np.concatenate([np.stack([h, t, j, np.zeros_like(j)], 1),
                                   np.stack([t[back], h[back], j[back], np.ones_like(j[back])], 1)])
            rows = rows[np.lexsort((rows[:, 3], rows[:, 2]))]  # edge order, forward first
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
            starts = np.searchsorted(rows[:, 0], np.arange(self.num_nodes + 1))
            self._csr = (starts, rows[:, 1:])
        starts, rows = self._csr
        return [(v, e, d) for v, e, d in rows[starts[u]:starts[u + 1]].tolist()]

    def find(self, strings: Iterable[str]) -> list[int]:
        """Local indices of the nodes whose id, or normalised name, equals one of ``strings``."""
        wanted = [s for s in strings if s]
        out: set[int] = set()
        by_norm: dict[str, list[int]] | None = None
        for s in wanted:
            i = self.index_of(s)
            if i is not None:
                out.add(i)
                continue
            if by_norm is None:
                by_norm = {}
                for j, name in enumerate(self.names):
                    if name:
                        by_norm.setdefault(normalize(name), []).append(j)
            out.update(by_norm.get(normalize(s), []))
        return sorted(out)

    def digest(self) -> str:
        """A content digest of what the GNN reads (node texts, relations, edges): equal digests, equal states."""
        if self._digest is None:
            h = hashlib.sha1()
            h.update("\x1f".join(self.text(i) for i in range(self.num_nodes)).encode())
            h.update(b"\x1e" + "\x1f".join(self.relations).encode() + b"\x1e")
            h.update(np.ascontiguousarray(self.edges, dtype=np.int32).tobytes())
            self._digest = h.hexdigest()
        return self._digest

    # -- serialisation -----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        meta = {"node_ids": self.node_ids, "names": self.names, "relations": self.relations,
                "topics": self.topics, "truncated": self.truncated}
        buf = io.BytesIO()
        np.savez(buf, cvt=self.cvt.astype(np.bool_), depth=self.depth.astype(np.int8),
                 edges=self.edges.astype(np.int32), meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        return zlib.compress(buf.getvalue(), 6)

    @classmethod
    def from_bytes(cls, blob: bytes) -> "ScrSubgraph":
        arrays = np.load(io.BytesIO(zlib.decompress(blob)))
        meta = json.loads(arrays["meta"].tobytes().decode())
        return cls(node_ids=meta["node_ids"], names=meta["names"], cvt=arrays["cvt"], depth=arrays["depth"],
                   edges=arrays["edges"].reshape(-1, 3), relations=meta["relations"], topics=meta["topics"],
                   truncated=meta["truncated"])


def relation_texts(name: str) -> tuple[str, str]:
    """Texts of a relation walked as stored and walked backwards (the reverse edge of message passing)."""
    text = relation_text(name)
    return text, text + REVERSE_SUFFIX


# -- extraction --------------------------------------------------------------------------------
_EXPAND = (
    "UNWIND $ids AS id MATCH (e:Entity {id: id}) "
    "CALL (e) { MATCH (e)-[r]-(n:Entity) WHERE NOT type(r) STARTS WITH 'SGR_' "
    "RETURN type(r) AS rel, startNode(r) = e AS out, n.id AS nid, n.name AS name, n:CVT AS cvt LIMIT $cap } "
    "RETURN e.id AS src, rel, out, nid, name, cvt")
_DEGREE = "UNWIND $ids AS id MATCH (e:Entity {id: id}) RETURN e.id AS id, COUNT { (e)--() } AS d"
_TOPICS = "UNWIND $ids AS id MATCH (e:Entity {id: id}) RETURN e.id AS id, e.name AS name, e:CVT AS cvt"


def fetch_subgraph(store: GraphStore, topic_ids: Sequence[str], cfg: SubgraphConfig) -> ScrSubgraph:
    """Cut G_q around ``topic_ids`` (graph ids) out of Neo4j, as described in the module docstring."""
    t0 = time.perf_counter()
    node_ids: list[str] = []
    names: list[str | None] = []
    cvt: list[bool] = []
    depth: list[int] = []
    index: dict[str, int] = {}
    rel_index: dict[str, int] = {}
    edges: dict[tuple[int, int, int], None] = {}
    truncated = False

    def add(nid: str, name: str | None, is_cvt: bool, d: int) -> int | None:
        i = index.get(nid)
        if i is not None:
            return i
        if len(node_ids) >= cfg.max_nodes:
            return None
        index[nid] = len(node_ids)
        node_ids.append(nid)
        names.append(name)
        cvt.append(bool(is_cvt))
        depth.append(d)
        return index[nid]

    for row in store.read(_TOPICS, {"ids": list(dict.fromkeys(topic_ids))}):
        add(row["id"], row["name"], bool(row["cvt"]), 0)
    topics = list(range(len(node_ids)))
    topic_set = set(node_ids)
    expanded: set[str] = set()

    def expand(ids: list[str], d: int) -> list[int]:
        """Fetch the neighbours of ``ids`` (reached in round ``d``); returns the new nodes' indices."""
        nonlocal truncated
        fresh: list[int] = []
        ids = [i for i in ids if i not in expanded]
        if not ids:
            return fresh
        degrees = {r["id"]: r["d"] for r in store.read(_DEGREE, {"ids": ids})}
        ids = [i for i in ids if i in topic_set or degrees.get(i, 0) <= cfg.hub_degree]
        ids.sort(key=lambda i: (degrees.get(i, 0), i))
        expanded.update(ids)
        groups = [([i for i in ids if i in topic_set], cfg.topic_cap),
                  ([i for i in ids if i not in topic_set], cfg.node_cap)]
        for group, cap in groups:
            for start in range(0, len(group), 200):
                chunk = group[start:start + 200]
                rows = store.read(_EXPAND, {"ids": chunk, "cap": cap})
                order = {nid: k for k, nid in enumerate(chunk)}
                rows.sort(key=lambda r: order[r["src"]])
                for r in rows:
                    if degrees.get(r["src"], 0) > cap:
                        truncated = True
                    known = r["nid"] in index
                    j = add(r["nid"], r["name"], bool(r["cvt"]), d)
                    if j is None:
                        truncated = True
                        continue
                    if not known:
                        fresh.append(j)
                    i = index[r["src"]]
                    rel = rel_index.setdefault(r["rel"], len(rel_index))
                    edges[(i, rel, j) if r["out"] else (j, rel, i)] = None
        return fresh

    frontier = [node_ids[i] for i in topics]
    for d in range(1, cfg.hops + 1):
        fresh = expand(frontier, d)
        if cfg.cvt_aware:  # a CVT does not count as a hop: expand it within the same round
            todo = [node_ids[j] for j in fresh if cvt[j]]
            seen_cvt: set[str] = set()
            while todo:
                seen_cvt.update(todo)
                more = expand(todo, d)
                fresh.extend(more)
                todo = [node_ids[j] for j in more if cvt[j] and node_ids[j] not in seen_cvt]
        frontier = [node_ids[j] for j in fresh]
        if not frontier:
            break

    edge_arr = np.array(list(edges), dtype=np.int32).reshape(-1, 3)
    return ScrSubgraph(node_ids=node_ids, names=names, cvt=np.array(cvt, dtype=np.bool_),
                    depth=np.array(depth, dtype=np.int8), edges=edge_arr,
                    relations=sorted(rel_index, key=rel_index.get), topics=topics, truncated=truncated,
                    seconds=time.perf_counter() - t0)


# -- cache -------------------------------------------------------------------------------------
class SubgraphCache:
    """``topic ids -> ScrSubgraph`` (table ``subgraphs``) and dataset strings -> graph ids (table ``topic_ids``) in
    one :class:`sgr.llm.cache.KVCache` file per graph version and :class:`SubgraphConfig`."""

    def __init__(self, graph_version: str, cfg: SubgraphConfig, folder: Path | None = None) -> None:
        self.graph_version = graph_version
        self.cfg = cfg
        self.path = (folder or cache_dir("scr")) / f"scr-subgraphs-{graph_version}-{cfg.key()}.sqlite"
        self._graphs = KVCache(self.path, "subgraphs")
        self._ids = KVCache(self.path, "topic_ids")

    @staticmethod
    def key(topic_ids: Iterable[str]) -> str:
        return "\x1f".join(sorted(set(topic_ids)))

    def get(self, topic_ids: Iterable[str]) -> ScrSubgraph | None:
        blob = self._graphs.get(self.key(topic_ids))
        return ScrSubgraph.from_bytes(blob) if blob is not None else None

    def put(self, topic_ids: Iterable[str], sg: ScrSubgraph) -> None:
        self._graphs.put(self.key(topic_ids), sg.to_bytes())

    def __len__(self) -> int:
        return len(self._graphs)

    def get_ids(self, key: str) -> list[str] | None:
        """Cached entity resolution (dataset strings -> graph ids)."""
        return self._ids.get_json(key)

    def put_ids(self, key: str, ids: list[str]) -> None:
        self._ids.put_json(key, ids)


class SubgraphSource:
    """Subgraphs for topic-id sets: from the cache when present, else from Neo4j (then cached).

    ``store`` may be ``None`` when everything needed is cached (then ``graph_version`` must be given).
    """

    def __init__(self, store: GraphStore | None, cfg: SubgraphConfig, graph_version: str | None = None,
                 folder: Path | None = None) -> None:
        if graph_version is None:
            if store is None:
                raise ValueError("SubgraphSource needs a store or a graph_version")
            graph_version = store.graph_version()
        self.store = store
        self.cfg = cfg
        self.cache = SubgraphCache(graph_version, cfg, folder)
        self.fetched = 0
        self.hits = 0

    @property
    def graph_version(self) -> str:
        return self.cache.graph_version

    def topic_ids(self, question: Question) -> list[str]:
        """Graph ids of the question's topic entities (MIDs first, then names), resolved once and cached."""
        keys = list(dict.fromkeys([*question.topic_mids, *question.topic_entities]))
        ck = "topics\x1f" + "\x1f".join(keys)
        ids = self.cache.get_ids(ck)
        if ids is None:
            if self.store is None:
                return [k for k in keys]  # best effort without Neo4j: ids are names (MetaQA, the WebQSP slice)
            found = EntityLinker(self.store).resolve(keys)
            ids = list(dict.fromkeys(i for k in keys for i in found.get(k, [])))
            self.cache.put_ids(ck, ids)
        return ids

    def for_question(self, question: Question) -> ScrSubgraph:
        """G_q of a dataset question (its topic entities resolved to graph ids)."""
        return self.get(self.topic_ids(question))

    def get(self, topic_ids: Sequence[str]) -> ScrSubgraph:
        sg = self.cache.get(topic_ids)
        if sg is not None:
            self.hits += 1
            return sg
        if self.store is None:
            from sgr.core.errors import Neo4jUnavailable

            raise Neo4jUnavailable(f"subgraph of {list(topic_ids)} is not cached in {self.cache.path} "
                                   "and no Neo4j store was given: set NEO4J_URI")
        sg = fetch_subgraph(self.store, topic_ids, self.cfg)
        self.cache.put(topic_ids, sg)
        self.fetched += 1
        return sg


# -- shortest paths (training targets) ---------------------------------------------------------
@dataclass(frozen=True)
class Walk:
    """A walk in G_q: ``nodes[0]`` a topic entity; step i goes ``nodes[i] -edges[i]-> nodes[i+1]``.

    ``directions[i]`` is 0 when edge ``edges[i]`` is walked as stored, 1 when walked backwards.
    """

    nodes: tuple[int, ...]
    edges: tuple[int, ...]
    directions: tuple[int, ...]

    @property
    def length(self) -> int:
        return len(self.edges)


def _bfs(sg: ScrSubgraph, source: int, max_depth: int) -> tuple[dict[int, int], dict[int, list[tuple[int, int, int]]]]:
    """Distances from ``source`` and, per node, the predecessors ``(u, edge, dir)`` on shortest walks."""
    adj = sg.adjacency()
    dist = {source: 0}
    preds: dict[int, list[tuple[int, int, int]]] = {source: []}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        if dist[u] >= max_depth:
            continue
        for v, e, d in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                preds[v] = [(u, e, d)]
                queue.append(v)
            elif dist[v] == dist[u] + 1:
                preds[v].append((u, e, d))
    return dist, preds


def shortest_paths(sg: ScrSubgraph, answers: Sequence[int], max_paths: int = 32, per_answer: int = 4,
                   max_depth: int = 8) -> list[Walk]:
    """Shortest walks from the topic entities to the answer nodes inside G_q (SCR "Implementation Details").

    For each answer the topic entities at the smallest distance are used; up to ``per_answer`` walks per
    answer (enumerated in a fixed order) and ``max_paths`` in all. Answers that are topic entities give no
    walk (a walk of length 0 teaches nothing but "stay").
    """
    topics = [t for t in sg.topics if t not in set(answers)]
    if not topics:
        return []
    searches = [(t, *_bfs(sg, t, max_depth)) for t in topics]
    walks: list[Walk] = []
    for a in answers:
        best = min((dist[a] for _, dist, _ in searches if a in dist), default=None)
        if best is None or best == 0:
            continue
        found = 0
        for t, dist, preds in searches:
            if dist.get(a) != best:
                continue
            # depth-first enumeration back from the answer
            stack: list[tuple[int, list[tuple[int, int, int]]]] = [(a, [])]
            while stack and found < per_answer:
                v, suffix = stack.pop()
                if v == t:
                    nodes = [t] + [step[0] for step in suffix]
                    walk = Walk(nodes=tuple(nodes), edges=tuple(s[1] for s in suffix),
                                directions=tuple(s[2] for s in suffix))
                    if len(set(walk.nodes)) == len(walk.nodes):
                        walks.append(walk)
                        found += 1
                    continue
                for u, e, d in reversed(preds[v]):
                    stack.append((u, [(v, e, d)] + suffix))
            if found >= per_answer:
                break
        if len(walks) >= max_paths:
            break
    return walks[:max_paths]


def gold_walks(sg: ScrSubgraph, gold_paths: Sequence[Sequence[str]], answers: Sequence[int],
               directions: Sequence[Sequence[str]] | None = None, max_paths: int = 32, per_answer: int = 4,
               budget: int = 50_000) -> list[Walk]:
    """Walks from a topic entity that follow a dataset's gold relation path and end on an answer.

    ``gold_paths[k]`` is a relation sequence (MetaQA's question type, WebQSP's ``ground_paths``);
    ``directions[k][i]`` (``"out"``/``"in"``), when given, fixes how step i walks its edge. Depth-first, never
    back to the topic entity nor over an edge twice (:func:`sgr.methods.scr.model.step_candidates`), at most
    ``per_answer`` walks per answer, ``max_paths`` in all and ``budget`` expansions.
    """
    wanted = set(answers)
    adj = sg.adjacency()
    rel_of = {name: k for k, name in enumerate(sg.relations)}
    per: dict[int, int] = {}
    walks: list[Walk] = []
    expansions = 0
    for k, rels in enumerate(gold_paths):
        if not rels or any(r not in rel_of for r in rels):
            continue
        want = [rel_of[r] for r in rels]
        dirs = list(directions[k]) if directions and k < len(directions) and directions[k] else None
        for t in sg.topics:
            stack: list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = [((t,), (), ())]
            while stack and len(walks) < max_paths and expansions < budget:
                nodes, edges, ds = stack.pop()
                i = len(edges)
                if i == len(want):
                    end = nodes[-1]
                    if end in wanted and per.get(end, 0) < per_answer:
                        per[end] = per.get(end, 0) + 1
                        walks.append(Walk(nodes, edges, ds))
                    continue
                expansions += 1
                for v, e, d in reversed(adj[nodes[-1]]):
                    if int(sg.edges[e, 1]) != want[i] or v == nodes[0] or e in edges:
                        continue
                    if dirs is not None and i < len(dirs) and dirs[i] in ("out", "in") and d != (0 if dirs[i] == "out" else 1):
                        continue
                    stack.append((nodes + (v,), edges + (e,), ds + (d,)))
    return walks


def reachable(sg: ScrSubgraph, answers: Sequence[int], max_depth: int) -> bool:
    """True when some answer node lies within ``max_depth`` undirected steps of a topic entity in G_q."""
    if not answers:
        return False
    wanted = set(answers)
    for t in sg.topics:
        dist, _ = _bfs(sg, t, max_depth)
        if wanted & set(dist):
            return True
    return False


# -- examples and splits ---------------------------------------------------------------------------
@dataclass
class Example:
    """One question with its G_q, the answer nodes found in it and the shortest topic→answer walks."""

    question: Question
    subgraph: ScrSubgraph
    answers: list[int]
    walks: list[Walk]


SUPERVISION = ("shortest", "gold-first")


def build_examples(source: SubgraphSource, questions: Sequence[Question], max_depth: int,
                   progress: "object | None" = None, supervision: str = "shortest") -> list[Example]:
    """G_q and step targets for each question (``progress``: a callable ``advance()``, optional).

    ``supervision="shortest"`` is the paper's: shortest topic→answer walks. ``"gold-first"`` uses the walks
    that follow the question's gold relation path when there are any (:func:`gold_walks`), else the shortest
    ones — on MetaQA a 3-hop question's answer set often contains entities one hop from the topic (the topic
    film's own genre or year), whose shortest walk teaches the model to stop after one step.
    """
    if supervision not in SUPERVISION:
        raise ValueError(f"supervision must be one of {SUPERVISION}, got {supervision!r}")
    out: list[Example] = []
    for q in questions:
        sg = source.for_question(q)
        answers = sg.find(q.answers)
        walks: list[Walk] = []
        if supervision == "gold-first" and q.gold_paths:
            walks = [w for w in gold_walks(sg, q.gold_paths, answers, q.extra.get("gold_directions"))
                     if w.length <= max_depth]
        if not walks:
            walks = shortest_paths(sg, answers, max_depth=max_depth)
        out.append(Example(q, sg, answers, walks))
        if progress is not None:
            progress()  # type: ignore[operator]
    return out


def split_of(question_id: str, test_share: float = 0.2, salt: str = "scr-split") -> str:
    """``"test"`` or ``"train"`` by a fixed hash of the id: ``sha256(salt:id)`` mod 10 000 < share·10 000.

    The WebQSP slice has no train split; this gives a documented, seed-free held-out part (80/20 by
    default) that every run reproduces. Use another ``salt`` to carve a validation part out of train.
    """
    h = int(hashlib.sha256(f"{salt}:{question_id}".encode()).hexdigest()[:8], 16) % 10_000
    return "test" if h < test_share * 10_000 else "train"
