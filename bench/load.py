"""Loader benchmark: MetaQA KB and the WebQSP slice into an empty Neo4j, against two baselines.

Run against a running Neo4j (``NEO4J_URI``; start a fresh one first so that run 1 is a cold JVM)::

    SGR_HOME=/tmp/sgr-load .venv/bin/sgr neo4j start
    NEO4J_URI=bolt://127.0.0.1:PORT SGR_HOME=/tmp/sgr-load nice -n 10 .venv/bin/python bench/load.py
    SGR_HOME=/tmp/sgr-load .venv/bin/sgr neo4j stop

or let it start (and stop) a fresh embedded server of its own: ``bench/load.py --fresh-server``
(``--jvm-flags=-XX:TieredStopAtLevel=1 --out …`` tries extra JVM flags on that server).

What is measured, all in one run on the same server:

* **sgr**: ``loaders.api.load_files`` on the whole file (parse + write + full-text index + Source
  record), into a database emptied before each repetition; ``--reps`` repetitions (default 3),
  the median is the headline. Run 1 on a freshly started server is the cold-JVM figure and is
  reported on its own as well (nothing is warmed up beforehand).
* **naive**: one auto-commit ``MERGE (h) MERGE (t) MERGE (h)-[:T]->(t)`` per triple, on the first
  ``--naive-n`` triples of a random sample of ``--baseline-n`` MetaQA triples (seed ``--seed``);
  its rate is extrapolated to the whole KB (stated in the JSON).
* **langchain**: ``langchain_neo4j.Neo4jGraph.add_graph_documents`` (``baseEntityLabel=True``, its
  indexed fast path) on the same sample, two ways: one ``GraphDocument`` per head entity (how
  LLM-extracted graphs arrive) and one single ``GraphDocument`` with the whole sample (its most
  batched use). The speed-up is taken against the faster of the two.
* sgr on the same sample too, so the same-size ratio is visible next to the whole-KB one.

Server CPU seconds (from ``/proc`` when the server is the local embedded one) are recorded next
to wall time: the machine is shared, and CPU time is the figure least moved by other load.
Writes ``bench/results/load.json`` (``summary`` + details) and prints a table.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from loaders.api import load_files, parse_file  # noqa: E402
from loaders.spill import edge_rows  # noqa: E402
from loaders.writer import GraphBatch, write_graph  # noqa: E402
from sgr.core.config import Neo4jSettings  # noqa: E402
from sgr.graph.store import GraphStore, quote_identifier  # noqa: E402


def shared_data() -> Path:
    env = os.environ.get("SGR_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data", ROOT / ".." / "shared" / "data"]:
        if cand.exists():
            return cand.resolve()
    raise SystemExit("shared data not found: set SGR_SHARED_DATA")


class ServerCpu:
    """CPU seconds used by the local Neo4j process (None when it is not a local embedded server)."""

    def __init__(self, uri: str) -> None:
        self.pid: int | None = None
        try:
            from sgr.graph import server as neo4j_server

            info = neo4j_server.status()
            if info is not None and info.uri == uri:
                self.pid = info.pid
        except Exception:  # noqa: BLE001 - measurement is optional
            self.pid = None
        self.tck = os.sysconf("SC_CLK_TCK")

    def read(self) -> float | None:
        if self.pid is None:
            return None
        try:
            fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self.tck
        except OSError:
            return None


def empty(store: GraphStore) -> None:
    store.clear()
    for row in store.read("SHOW CONSTRAINTS YIELD name, labelsOrTypes RETURN name, labelsOrTypes"):
        if "__Entity__" in row["labelsOrTypes"]:
            store.write(f"DROP CONSTRAINT {quote_identifier(row['name'])} IF EXISTS")


def counts(store: GraphStore) -> tuple[int, int]:
    n = store.read("MATCH (e:Entity) RETURN count(e) AS n")[0]["n"]
    r = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    return n, r


def bench_sgr(store: GraphStore, cpu: ServerCpu, path: Path, fmt: str, reps: int) -> list[dict[str, Any]]:
    runs = []
    for rep in range(1, reps + 1):
        empty(store)
        c0 = cpu.read()
        pc0 = time.process_time()
        t0 = time.perf_counter()
        report = load_files(store, [path], fmt=fmt, force=True)
        wall = time.perf_counter() - t0
        c1 = cpu.read()
        f = report.files[0]
        nodes, rels = counts(store)
        if rels != f.triples:
            raise SystemExit(f"count mismatch after loading {path}: {rels} relationships vs {f.triples} triples")
        runs.append({"rep": rep, "seconds": wall, "triples": f.triples, "triples_per_s": f.triples / wall,
                     "parse_seconds": f.parse_seconds, "write_seconds": f.write_seconds,
                     "server_cpu_seconds": (c1 - c0) if c0 is not None and c1 is not None else None,
                     "client_cpu_seconds": time.process_time() - pc0, "entities": nodes,
                     "loadavg_1m": os.getloadavg()[0]})
        print(f"  {path.name} run {rep}: {wall:.2f} s, {f.triples / wall:,.0f} triples/s", flush=True)
    return runs


def sample_triples(path: Path, n: int, seed: int) -> list[tuple[str, str, str]]:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sgr-bench-") as tmp:
        spill, _ = parse_file(path, "triples", Path(tmp))
        batch_triples = set(edge_rows(spill.edges))
    ordered = sorted(batch_triples)
    rng = random.Random(seed)
    return rng.sample(ordered, min(n, len(ordered)))


def bench_naive(store: GraphStore, triples: list[tuple[str, str, str]]) -> dict[str, Any]:
    empty(store)
    store.ensure_schema()
    driver = store._driver  # noqa: SLF001 - the baseline needs plain auto-commit sessions
    t0 = time.perf_counter()
    with driver.session(database=store.database) as session:
        for h, r, t in triples:
            session.run(f"MERGE (h:Entity {{id: $h}}) ON CREATE SET h.name = $h "
                        f"MERGE (t:Entity {{id: $t}}) ON CREATE SET t.name = $t "
                        f"MERGE (h)-[:{quote_identifier(r)}]->(t)", h=h, t=t).consume()
    wall = time.perf_counter() - t0
    _, rels = counts(store)
    return {"triples": len(triples), "seconds": wall, "triples_per_s": len(triples) / wall, "relationships": rels}


#: APOC procedures LangChain's Neo4jGraph.add_graph_documents calls (loaded only for --fresh-server runs)
LANGCHAIN_PROCEDURES = ("apoc.merge.node", "apoc.merge.relationship", "apoc.meta.data")


def bench_langchain(store: GraphStore, uri: str, triples: list[tuple[str, str, str]], per_head: bool) -> dict[str, Any]:
    from langchain_core.documents import Document
    from langchain_neo4j import Neo4jGraph
    from langchain_neo4j.graphs.graph_document import GraphDocument, Node, Relationship

    empty(store)
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for tr in triples:
        groups.setdefault(tr[0] if per_head else "all", []).append(tr)
    docs = []
    for key, trs in groups.items():
        nodes = {}
        rels = []
        for h, r, t in trs:
            nodes.setdefault(h, Node(id=h, type="Entity"))
            nodes.setdefault(t, Node(id=t, type="Entity"))
            rels.append(Relationship(source=nodes[h], target=nodes[t], type=r))
        docs.append(GraphDocument(nodes=list(nodes.values()), relationships=rels,
                                  source=Document(page_content=key)))
    s = Neo4jSettings()
    graph = Neo4jGraph(url=uri, username=s.user if s.resolved_password() else "", password=s.resolved_password(),
                       database=s.database, refresh_schema=False)
    t0 = time.perf_counter()
    graph.add_graph_documents(docs, baseEntityLabel=True)
    wall = time.perf_counter() - t0
    graph.close()
    _, rels = counts(store)
    return {"triples": len(triples), "documents": len(docs), "seconds": wall,
            "triples_per_s": len(triples) / wall, "relationships": rels}


def bench_sgr_subset(store: GraphStore, triples: list[tuple[str, str, str]]) -> dict[str, Any]:
    empty(store)
    batch = GraphBatch()
    for h, r, t in triples:
        batch.add_triple(h, r, t)
    t0 = time.perf_counter()
    write_graph(store, batch)
    wall = time.perf_counter() - t0
    return {"triples": len(triples), "seconds": wall, "triples_per_s": len(triples) / wall}


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--baseline-n", type=int, default=2000, help="triples in the LangChain sample")
    ap.add_argument("--naive-n", type=int, default=1000, help="triples for the naive baseline (a prefix of the sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "load.json")
    ap.add_argument("--fresh-server", action="store_true",
                    help="start a fresh embedded Neo4j in a temporary SGR_HOME (cold JVM, empty store), stop it after")
    ap.add_argument("--jvm-flags", default="", help="with --fresh-server: extra JVM flags, e.g. --jvm-flags=-XX:TieredStopAtLevel=1")
    args = ap.parse_args(argv)
    if args.fresh_server:
        import shutil
        import tempfile

        from sgr.graph import server as neo4j_server

        home = tempfile.mkdtemp(prefix="sgr-bench-load-")
        os.environ["SGR_HOME"] = home
        neo4j_server.JVM_FLAGS = neo4j_server.JVM_FLAGS + args.jvm_flags.split()
        # the baseline's own needs: add_graph_documents merges through APOC and refreshes its schema with
        # apoc.meta.data, which sgr's server does not load (it allows only the procedures sgr calls)
        neo4j_server.PROCEDURE_ALLOWLIST = neo4j_server.PROCEDURE_ALLOWLIST + LANGCHAIN_PROCEDURES
        info = neo4j_server.start()
        os.environ["NEO4J_URI"] = info.uri
        try:
            result = run(args)
        finally:
            neo4j_server.stop()
            shutil.rmtree(home, ignore_errors=True)
        return result
    return run(args)


def run(args: argparse.Namespace) -> dict[str, Any]:

    data = shared_data()
    metaqa = data / "metaqa" / "kb.txt"
    webqsp = data / "webqsp" / "webqsp_mini.jsonl"
    uri = Neo4jSettings().resolved_uri()
    store = GraphStore.from_settings()
    store.verify()
    cpu = ServerCpu(uri)
    started = time.time()
    load0 = os.getloadavg()[0]
    print(f"Neo4j {uri}; {os.cpu_count()} CPUs, load average {load0:.1f}", flush=True)

    metaqa_runs = bench_sgr(store, cpu, metaqa, "triples", args.reps)
    webqsp_runs = bench_sgr(store, cpu, webqsp, "rog", args.reps)
    sample = sample_triples(metaqa, args.baseline_n, args.seed)
    print(f"  baselines on {len(sample):,} sampled MetaQA triples (seed {args.seed}) …", flush=True)
    ours_subset = bench_sgr_subset(store, sample)
    naive = bench_naive(store, sample[:args.naive_n])
    lc_docs = bench_langchain(store, uri, sample, per_head=True)
    lc_one = bench_langchain(store, uri, sample, per_head=False)
    empty(store)
    store.ensure_schema()
    store.close()

    m_sec = median([r["seconds"] for r in metaqa_runs])
    m_rate = median([r["triples_per_s"] for r in metaqa_runs])
    w_rate = median([r["triples_per_s"] for r in webqsp_runs])
    lc_best = max(lc_docs["triples_per_s"], lc_one["triples_per_s"])
    warm = metaqa_runs[1:] or metaqa_runs
    result: dict[str, Any] = {
        "summary": {
            "metaqa_triples_per_s": round(m_rate, 1),
            "metaqa_seconds": round(m_sec, 3),
            "webqsp_triples_per_s": round(w_rate, 1),
            "speedup_vs_langchain": round(m_rate / lc_best, 2),
            "speedup_vs_naive": round(m_rate / naive["triples_per_s"], 2),
        },
        "metaqa": {"file": str(metaqa), "triples": metaqa_runs[0]["triples"], "runs": metaqa_runs,
                   "cold_seconds": metaqa_runs[0]["seconds"],
                   "warm_median_seconds": median([r["seconds"] for r in warm]),
                   "median_server_cpu_seconds": (median([r["server_cpu_seconds"] for r in metaqa_runs])
                                                 if metaqa_runs[0]["server_cpu_seconds"] is not None else None)},
        "webqsp": {"file": str(webqsp), "triples": webqsp_runs[0]["triples"], "runs": webqsp_runs,
                   "median_seconds": median([r["seconds"] for r in webqsp_runs])},
        "baselines": {
            "sample": {"source": "metaqa kb.txt", "triples": len(sample), "seed": args.seed,
                       "naive_triples": min(args.naive_n, len(sample)),
                       "how": "random.Random(seed).sample(sorted(distinct triples), n); naive: its first naive_n"},
            "sgr_on_sample": ours_subset,
            "naive_merge_per_triple": {**naive, "extrapolated_metaqa_seconds":
                                       metaqa_runs[0]["triples"] / naive["triples_per_s"]},
            "langchain_per_head_documents": {**lc_docs, "extrapolated_metaqa_seconds":
                                             metaqa_runs[0]["triples"] / lc_docs["triples_per_s"]},
            "langchain_single_document": {**lc_one, "extrapolated_metaqa_seconds":
                                          metaqa_runs[0]["triples"] / lc_one["triples_per_s"]},
            "note": ("baselines run on the sample only; their triples/s is extrapolated to the whole KB. "
                     "speedup_* = sgr's whole-KB median triples/s / the baseline's sample triples/s "
                     "(langchain: the faster of its two variants). Same-size ratios: see same_size_speedup."),
            "same_size_speedup": {
                "vs_naive": ours_subset["triples_per_s"] / naive["triples_per_s"],
                "vs_langchain": ours_subset["triples_per_s"] / lc_best,
            },
        },
        "environment": {"uri": uri, "cpus": os.cpu_count(), "python": platform.python_version(),
                        "fresh_server": args.fresh_server, "extra_jvm_flags": args.jvm_flags,
                        "loadavg_1m_start": load0, "loadavg_1m_end": os.getloadavg()[0],
                        "seconds_total": time.time() - started,
                        "note": "shared 2-core machine: other users' jobs run at the same time; "
                                "compare the ratios, and server CPU seconds, rather than absolute wall time"},
    }
    write_result(args.out, result)
    print_table(result)
    print(f"wrote {args.out}")
    return result


def print_table(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    b = result["baselines"]
    t = Table(title="sgr load benchmark")
    for col in ("what", "triples", "seconds", "triples/s", "note"):
        t.add_column(col, justify="right" if col in ("triples", "seconds", "triples/s") else "left")
    m, w = result["metaqa"], result["webqsp"]
    t.add_row("sgr MetaQA KB (median)", f"{m['triples']:,}", f"{result['summary']['metaqa_seconds']:.2f}",
              f"{result['summary']['metaqa_triples_per_s']:,.0f}",
              f"cold {m['cold_seconds']:.2f} s, warm {m['warm_median_seconds']:.2f} s")
    t.add_row("sgr WebQSP slice (median)", f"{w['triples']:,}", f"{w['median_seconds']:.2f}",
              f"{result['summary']['webqsp_triples_per_s']:,.0f}", "1,157 relation types")
    for key, label in (("sgr_on_sample", "sgr, sample"), ("naive_merge_per_triple", "naive MERGE/triple"),
                       ("langchain_per_head_documents", "LangChain, doc per head"),
                       ("langchain_single_document", "LangChain, 1 document")):
        row = b[key]
        note = f"≈{row['extrapolated_metaqa_seconds']:.0f} s for the KB" if "extrapolated_metaqa_seconds" in row else ""
        t.add_row(label, f"{row['triples']:,}", f"{row['seconds']:.2f}", f"{row['triples_per_s']:,.0f}", note)
    Console().print(t)
    s = result["summary"]
    print(f"speed-up vs LangChain: {s['speedup_vs_langchain']}x, vs naive: {s['speedup_vs_naive']}x")


if __name__ == "__main__":
    main()
