"""G_q extraction from the real Neo4j (caps, hubs, CVTs), the on-disk cache, and shortest-walk targets."""

from __future__ import annotations

import pytest

from sgr.methods.scr.data import SubgraphConfig, SubgraphSource, fetch_subgraph, shortest_paths, split_of


def _degree(store, node_id: str) -> int:
    return store.read("MATCH (e:Entity {id: $id}) RETURN COUNT { (e)--() } AS d", {"id": node_id})[0]["d"]


def _edge_exists(store, h: str, rel: str, t: str) -> bool:
    q = "MATCH (h:Entity {id: $h})-[r]->(t:Entity {id: $t}) WHERE type(r) = $rel RETURN count(r) AS n"
    return store.read(q, {"h": h, "rel": rel, "t": t})[0]["n"] > 0


def _movie(store) -> str:
    """A movie of the slice with a director and a language node of degree > 8 (a hub at hub_degree 8)."""
    return store.read("MATCH (l:Entity)<-[:in_language]-(m:Entity)-[:directed_by]->() WHERE COUNT { (l)--() } > 8 "
                      "RETURN m.id AS id ORDER BY COUNT { (m)--() } DESC, m.id LIMIT 1")[0]["id"]


def test_metaqa_subgraph_edges_depths_and_hubs(metaqa_graph) -> None:
    store = metaqa_graph
    movie = _movie(store)
    cfg = SubgraphConfig(hops=2, hub_degree=8, max_nodes=5000)
    sg = fetch_subgraph(store, [movie], cfg)
    assert sg.node_ids[0] == movie and sg.topics == [0] and sg.depth[0] == 0
    assert sg.num_nodes > 5 and sg.num_edges >= sg.num_nodes - 1
    for h, r, t in sg.edges[:40].tolist():  # edges are real and kept in their stored direction
        assert _edge_exists(store, sg.node_ids[h], sg.relations[r], sg.node_ids[t])
    # a node at depth 2 hangs off a depth-1 node that was expanded, and expanded non-topic nodes are no hubs
    for h, _, t in sg.edges.tolist():
        for a, b in ((h, t), (t, h)):
            if sg.depth[a] == 1 and sg.depth[b] == 2:
                assert _degree(store, sg.node_ids[a]) <= cfg.hub_degree
    hubs = [i for i in range(sg.num_nodes) if sg.depth[i] == 1 and _degree(store, sg.node_ids[i]) > cfg.hub_degree]
    assert hubs, "the movie's language is a hub at hub_degree 8"


def test_node_cap_truncates(metaqa_graph) -> None:
    sg = fetch_subgraph(metaqa_graph, [_movie(metaqa_graph)], SubgraphConfig(hops=3, max_nodes=12, hub_degree=1000))
    assert sg.num_nodes == 12 and sg.truncated


def test_cache_serves_without_neo4j(metaqa_graph, tmp_path) -> None:
    cfg = SubgraphConfig(hops=2)
    src = SubgraphSource(metaqa_graph, cfg, folder=tmp_path)
    movie = _movie(metaqa_graph)
    first = src.get([movie])
    again = src.get([movie])
    assert (src.fetched, src.hits) == (1, 1)
    offline = SubgraphSource(None, cfg, graph_version=src.graph_version, folder=tmp_path)
    cached = offline.get([movie])
    assert cached.node_ids == first.node_ids == again.node_ids
    assert (cached.edges == first.edges).all() and cached.relations == first.relations
    other = SubgraphSource(None, SubgraphConfig(hops=1), graph_version=src.graph_version, folder=tmp_path)
    with pytest.raises(Exception, match="not cached"):
        other.get([movie])  # another config is another cache


def test_cvt_does_not_count_as_a_hop(webqsp_graph) -> None:
    store = webqsp_graph
    polk = store.read("MATCH (e:Entity {id: 'James K. Polk'})--(c:CVT)--(o:Entity) WHERE NOT o:CVT "
                      "AND o.id <> 'James K. Polk' RETURN c.id AS cvt, o.id AS office LIMIT 1")
    assert polk, "the WebQSP slice links Polk to offices through CVT nodes"
    office = polk[0]["office"]
    aware = fetch_subgraph(store, ["James K. Polk"], SubgraphConfig(hops=1, cvt_aware=True, hub_degree=10_000))
    plain = fetch_subgraph(store, ["James K. Polk"], SubgraphConfig(hops=1, cvt_aware=False, hub_degree=10_000))
    assert aware.index_of(office) is not None and aware.depth[aware.index_of(office)] == 1
    assert plain.index_of(polk[0]["cvt"]) is not None and plain.index_of(office) is None
    walks = shortest_paths(aware, [aware.index_of(office)])
    assert walks and walks[0].length == 2 and aware.cvt[walks[0].nodes[1]]


def test_hash_split_is_stable_and_about_80_20() -> None:
    ids = [f"WebQTest-{i}" for i in range(2000)]
    parts = [split_of(i) for i in ids]
    assert parts == [split_of(i) for i in ids]
    assert 0.17 < parts.count("test") / len(parts) < 0.23
