"""sgr against LangChain's GraphCypherQAChain and neo4j-graphrag's Text2CypherRetriever + GraphRAG on Neo4j's movie
graph: the same questions, the same local model, the same metric code.

Needs a Neo4j with the movie graph (``sgr load example movies``) and the local model (``sgr llm serve``)::

    python bench/anygraph.py                       # dev (125) and held-out (40) questions, every system
    python bench/anygraph.py --systems sgr --sets dev --limit 10
    python bench/anygraph.py --metaqa-property-home H1 --metaqa-entity-home H2   # and MetaQA dev, both shapes

Questions: ``bench/data/movies_dev.jsonl`` (written to develop sgr's rules on) and ``bench/data/movies_heldout.jsonl``
(written afterwards and never used to change a rule), each with the Cypher that computes its gold answers; the script
re-runs every gold query first and stops when one no longer gives the stored answers (the graph is not the movie
graph). Every system gets one question at a time:

* ``sgr``: ``create_method("sgr")`` — on this graph the profiled route (:mod:`sgr.methods.sgr.profiled`);
* ``langchain-cypher-qa``: ``GraphCypherQAChain.from_llm`` (langchain-neo4j), its Cypher run through sgr's read-only
  executor (the chain would run any query it is given);
* ``neo4j-graphrag-text2cypher``: ``GraphRAG(Text2CypherRetriever(...), llm)`` (neo4j-graphrag, which EXPLAIN-checks
  reads itself).

Both peers read the graph's schema with APOC's ``apoc.meta.data``, which the embedded Neo4j does not load; they are
given the schema text neo4j-graphrag's own ``format_schema`` writes from the same labels, properties and patterns
(sgr's profile, read with Neo4j's built-in schema procedures). The peers' answers are the values of the rows their
Cypher returned (first column, in row order) — what they retrieved, scored like sgr's answer lists by
``sgr.evaluation.metrics.scores``; their generated reply is kept in the rows and scored leniently (``hit_reply``:
a gold answer occurs in it). Latency is wall time per question; ``calls`` counts chat-model calls.

MetaQA (``--metaqa-*``): the same sample of MetaQA dev questions per hop (``--metaqa-sample``, seed 0; never the
test files) answered by sgr on the KB as a property graph (``sgr load example metaqa``, the profiled route) and by
``--metaqa-methods`` on the KB in sgr's ``:Entity`` shape (``sgr load triples kb.txt``), each in its own Neo4j (the
``SGR_HOME`` folders given; without ``--metaqa-entity-home`` only the property graph).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.record import served_weights, write_result  # noqa: E402

SETS = {"dev": ROOT / "bench" / "data" / "movies_dev.jsonl", "heldout": ROOT / "bench" / "data" / "movies_heldout.jsonl"}
SYSTEMS = ("sgr", "langchain-cypher-qa", "neo4j-graphrag-text2cypher")
#: The peers' replies: long enough for a Cypher query or a sentence, short of a 135M model's rambling.
PEER_MAX_TOKENS = 256
#: APOC's type names, as the peers' schema text spells them, for Neo4j's schema procedure names.
APOC_TYPES = {"Long": "INTEGER", "Integer": "INTEGER", "Double": "FLOAT", "Float": "FLOAT", "String": "STRING",
              "Boolean": "BOOLEAN", "StringArray": "LIST", "LongArray": "LIST", "DoubleArray": "LIST",
              "Date": "DATE", "DateTime": "DATE_TIME"}


def read_questions(name: str, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in SETS[name].read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def check_gold(store: Any, questions: list[dict[str, Any]]) -> None:
    """Every gold query still gives its stored answers (else this is not the movie graph)."""
    for q in questions:
        got = sorted({str(r["a"]) for r in store.read(q["cypher"]) if r["a"] is not None})
        if got != q["answers"]:
            raise SystemExit(f"{q['id']}: the gold query gives {got[:3]}…, the file {q['answers'][:3]}…: load the movie "
                             "graph (sgr load example movies) into an otherwise empty database")


def peer_schema(profile: Any) -> str:
    """The schema text neo4j-graphrag's ``format_schema`` writes, from the profile's labels and patterns."""
    from neo4j_graphrag.schema import format_schema

    structured = {
        "node_props": {lb: [{"property": p, "type": APOC_TYPES.get(t, t.upper())} for p, t in lp.properties.items()]
                       for lb, lp in profile.labels.items()},
        "rel_props": {},
        "relationships": [{"start": r.start, "type": r.type, "end": r.end} for r in profile.relationships],
        "metadata": {"constraint": [], "index": []},
    }
    for r in profile.relationships:
        if r.properties:
            structured["rel_props"][r.type] = [{"property": p, "type": APOC_TYPES.get(t, t.upper())}
                                               for p, t in r.properties.items()]
    return format_schema(structured, is_enhanced=False)


class CallCounter:
    """A LangChain callback that counts chat-model calls."""

    def __init__(self) -> None:
        from langchain_core.callbacks import BaseCallbackHandler

        counter = self

        class Handler(BaseCallbackHandler):
            def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
                counter.calls += 1

        self.calls = 0
        self.handler = Handler()


def first_column(rows: list[Any]) -> list[str]:
    """The first value of each row, as text, in order (lists flattened), each once."""
    out: list[str] = []
    for row in rows:
        values = list(row.values()) if isinstance(row, dict) else list(row.values()) if hasattr(row, "values") else [row]
        if not values:
            continue
        v = values[0]
        for item in (v if isinstance(v, list) else [v]):
            if item is not None and not isinstance(item, dict):
                text = str(int(item)) if isinstance(item, float) and item.is_integer() else str(item)
                if text not in out:
                    out.append(text)
            elif isinstance(item, dict):  # a node: its name-like value
                name = next((item[k] for k in ("name", "title") if k in item), None)
                if name is not None and str(name) not in out:
                    out.append(str(name))
    return out


def make_systems(names: list[str], store: Any, profile: Any,
                 sgr_options: list[tuple[str, str]] = ()) -> dict[str, Any]:
    """One ``ask(question) -> (answers, reply, calls, error, answered_by)`` per system (``sgr_options``: sgr's ``-o``
    options; ``answered_by``: which of sgr's sources answered — compiled, llm, vote — None for a peer)."""
    out: dict[str, Any] = {}
    if "sgr" in names:
        from sgr.core.types import Question
        from sgr.methods.base import MethodContext
        from sgr.methods.registry import create_method

        method = create_method("sgr", MethodContext(store=store, options=dict(sgr_options)))

        def ask_sgr(text: str) -> tuple[list[str], str, int, str | None, str | None]:
            pred = method.answer(Question(id="q", text=text))
            return (pred.answer_texts, pred.cypher[-1] if pred.cypher else "", pred.usage.llm_calls, pred.error,
                    pred.extra.get("answered_by"))

        out["sgr"] = ask_sgr
    peers = [n for n in names if n != "sgr"]
    if not peers:
        return out
    from sgr.core.config import Neo4jSettings
    from sgr.llm.client import LLM

    counter = CallCounter()  # reset per question; the peers' model reports each call to it
    # llama.cpp's server reads ``max_tokens``, not the ``max_completion_tokens`` langchain-openai sends for max_tokens
    chat = LLM.from_settings(cache=False).chat.model_copy(update={"extra_body": {"max_tokens": PEER_MAX_TOKENS},
                                                                  "callbacks": [counter.handler]})
    schema = peer_schema(profile)
    password = Neo4jSettings().resolved_password()
    if "langchain-cypher-qa" in peers:
        from langchain_neo4j import GraphCypherQAChain, Neo4jGraph

        class ReadOnlyGraph(Neo4jGraph):
            """LangChain's graph whose queries run through sgr's read-only executor (timeout, row cap)."""

            def query(self, query: str, params: dict | None = None, session_params: dict | None = None) -> list:
                return store.run_generated(query, params or {}).rows

        graph = ReadOnlyGraph(url=store.uri, username="neo4j", password=password, refresh_schema=False)
        graph.schema = schema
        chain = GraphCypherQAChain.from_llm(chat, graph=graph, allow_dangerous_requests=True,
                                            return_intermediate_steps=True, top_k=50)

        def ask_langchain(text: str) -> tuple[list[str], str, int, str | None, None]:
            counter.calls = 0
            try:
                res = chain.invoke({"query": text})
            except Exception as exc:  # noqa: BLE001 - a peer's failure is a scored miss, recorded
                return [], "", counter.calls, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}", None
            steps = res.get("intermediate_steps") or []
            context = next((s.get("context") for s in steps if "context" in s), []) or []
            cypher = next((s.get("query") for s in steps if "query" in s), "")
            return first_column(context), f"{cypher}\n--\n{res.get('result', '')}", counter.calls, None, None

        out["langchain-cypher-qa"] = ask_langchain
    if "neo4j-graphrag-text2cypher" in peers:
        import neo4j
        from neo4j_graphrag.generation import GraphRAG
        from neo4j_graphrag.retrievers import Text2CypherRetriever

        driver = neo4j.GraphDatabase.driver(store.uri, auth=("neo4j", password))
        retriever = Text2CypherRetriever(driver=driver, llm=chat, neo4j_schema=schema)
        rag = GraphRAG(retriever=retriever, llm=chat)

        def ask_graphrag(text: str) -> tuple[list[str], str, int, str | None, None]:
            counter.calls = 0
            try:
                res = rag.search(query_text=text, return_context=True)
            except Exception as exc:  # noqa: BLE001 - a peer's failure is a scored miss, recorded
                return [], "", counter.calls, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}", None
            ctx = res.retriever_result
            records = [item.content for item in ctx.items] if ctx else []
            cypher = (ctx.metadata or {}).get("cypher", "") if ctx else ""
            values = first_column([_record_dict(c) for c in records])
            return values, f"{cypher}\n--\n{res.answer}", counter.calls, None, None

        out["neo4j-graphrag-text2cypher"] = ask_graphrag
    return out


def _record_dict(content: Any) -> dict[str, Any]:
    """A Text2CypherRetriever item (``<Record a=1 b='x'>`` text by default) as a dict of its first value."""
    import ast
    import re

    text = str(content)
    m = re.match(r"<Record (\w+)=(.*?)(?: \w+=.*)?>$", text, re.S)
    if not m:
        return {"value": text}
    raw = m.group(2)
    try:
        return {m.group(1): ast.literal_eval(raw)}
    except (ValueError, SyntaxError):
        return {m.group(1): raw.strip("'\"")}


def home_store(home: str) -> Any:
    """A store on the Neo4j that ``sgr neo4j start`` runs for SGR_HOME ``home`` (its URI and password)."""
    from sgr.graph.store import GraphStore

    info = json.loads((Path(home) / "neo4j" / "server.json").read_text(encoding="utf-8"))
    return GraphStore(info["uri"], password=(Path(home) / "neo4j" / "password").read_text().strip())


def run_metaqa(args: argparse.Namespace, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """sgr on MetaQA dev questions: the KB as a property graph (profiled route) beside sgr's ``:Entity`` shape."""
    from sgr.datasets import load_dataset
    from sgr.evaluation.metrics.scores import score_answers, summarize
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method, method_options

    graphs = [("metaqa-property-graph", args.metaqa_property_home, ["sgr"]),
              ("metaqa-entity", args.metaqa_entity_home, [m for m in args.metaqa_methods.split(",") if m])]
    for prefix, home, methods in graphs:
        if home is None:  # the property graph alone: compared with an :Entity figure of another run
            continue
        with home_store(home) as store:
            for method_name in methods:
                for hop in [int(h) for h in args.metaqa_hops.split(",") if h]:
                    # MetaQA k-hop questions get hops=k where the method has an expansion depth (bench/sgr.py's
                    # --hops-per-dataset); the profiled route has none
                    opts = {"hops": hop} if "hops" in method_options(method_name) and prefix == "metaqa-entity" else {}
                    method = create_method(method_name, MethodContext(store=store, options=opts))
                    data = load_dataset(f"metaqa-{hop}hop", split="dev", sample=args.metaqa_sample, seed=0)
                    scores, times, calls, by = [], [], [], {}
                    for q in data.questions:
                        t0 = time.perf_counter()
                        pred = method.answer(q)
                        times.append((time.perf_counter() - t0) * 1000)
                        sc = score_answers(pred.answer_texts, q.answers)
                        scores.append(sc)
                        calls.append(pred.usage.llm_calls)
                        by[pred.extra.get("answered_by")] = by.get(pred.extra.get("answered_by"), 0) + 1
                        rows.append({"set": f"metaqa-{hop}hop-dev", "system": f"{prefix}/{method_name}", "id": q.id,
                                     "question": q.text, "gold": q.answers[:20], "answers": pred.answer_texts[:20],
                                     "hits1_strict": sc.hits1_strict, "f1": round(sc.f1, 4),
                                     "ms": round(times[-1], 1), "calls": calls[-1], "error": pred.error})
                    s = summarize(scores)
                    key = f"{prefix}/{method_name}/{hop}hop"
                    summary[f"{key}/hits1_strict"] = round(s.hits1_strict, 4)
                    summary[f"{key}/f1"] = round(s.f1, 4)
                    summary[f"{key}/p50_ms"] = round(statistics.median(times), 1)
                    summary[f"{key}/calls"] = round(sum(calls) / len(calls), 3)
                    summary[f"{key}/n"] = s.n
                    summary.update({f"{key}/answered_by/{k}": v for k, v in sorted(by.items(), key=str) if k})
                    print(key, summary[f"{key}/hits1_strict"], s.n, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--sets", default="dev,heldout")
    ap.add_argument("--limit", type=int, default=None, help="the first N questions of each set")
    ap.add_argument("--sgr-option", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of sgr on the movie graph, as `sgr ask -o` takes it (lazy_verification=false: "
                         "the model's Cypher on every question)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "anygraph.json"))
    ap.add_argument("--metaqa-property-home", help="SGR_HOME whose Neo4j holds `sgr load example metaqa`")
    ap.add_argument("--metaqa-entity-home", help="SGR_HOME whose Neo4j holds `sgr load triples kb.txt` (:Entity)")
    ap.add_argument("--metaqa-methods", default="sgr-compiled,sgr", help="methods on the :Entity-shaped KB")
    ap.add_argument("--metaqa-sample", type=int, default=100, help="MetaQA dev questions per hop (seed 0)")
    ap.add_argument("--metaqa-hops", default="1,2,3", help="which MetaQA hop counts")
    args = ap.parse_args()
    if args.metaqa_entity_home and not args.metaqa_property_home:
        raise SystemExit("--metaqa-entity-home needs --metaqa-property-home (the :Entity figures stand beside those)")
    names = [s for s in args.systems.split(",") if s]
    unknown = set(names) - set(SYSTEMS)
    if unknown:
        raise SystemExit(f"unknown system {sorted(unknown)[0]!r}: choose from {', '.join(SYSTEMS)}")

    from sgr.api import connect
    from sgr.evaluation.metrics.hit import hit
    from sgr.evaluation.metrics.scores import score_answers, summarize
    from sgr.graph.profile import read_profile

    summary: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    with connect() as store:
        profile = read_profile(store)
        sgr_options = [tuple(o.split("=", 1)) for o in args.sgr_option]
        if any(len(o) != 2 for o in sgr_options):
            raise SystemExit("--sgr-option takes KEY=VALUE")
        systems = make_systems(names, store, profile, sgr_options)
        for set_name in [s for s in args.sets.split(",") if s]:
            questions = read_questions(set_name, args.limit)
            check_gold(store, questions)
            prefix = "movies" if set_name == "dev" else f"movies-{set_name}"
            for name, ask in systems.items():
                scores, times, calls, replies, sources = [], [], [], [], []
                for q in questions:
                    t0 = time.perf_counter()
                    answers, reply, n_calls, error, source = ask(q["question"])
                    ms = (time.perf_counter() - t0) * 1000
                    sc = score_answers(answers, q["answers"])
                    scores.append(sc)
                    times.append(ms)
                    calls.append(n_calls)
                    sources.append(source)
                    replies.append(hit([reply.split("\n--\n")[-1]], q["answers"]) if reply else 0.0)
                    rows.append({"set": set_name, "system": name, "id": q["id"], "kind": q["kind"],
                                 "question": q["question"], "gold": q["answers"], "answers": answers[:20],
                                 "hits1_strict": sc.hits1_strict, "f1": round(sc.f1, 4), "ms": round(ms, 1),
                                 "calls": n_calls, "reply": reply[:2000], "error": error,
                                 **({"answered_by": source} if name == "sgr" else {})})
                    print(f"{set_name} {name} {q['id']} h1={sc.hits1_strict:.0f} {ms:.0f}ms {answers[:3]}",
                          flush=True)
                s = summarize(scores)
                key = f"{prefix}/{name}"
                summary[f"{key}/hits1_strict"] = round(s.hits1_strict, 4)
                summary[f"{key}/f1"] = round(s.f1, 4)
                summary[f"{key}/hit"] = round(s.hit, 4)
                summary[f"{key}/p50_ms"] = round(statistics.median(times), 1)
                summary[f"{key}/calls"] = round(sum(calls) / len(calls), 3)
                summary[f"{key}/n"] = s.n
                if name != "sgr":
                    summary[f"{key}/hit_reply"] = round(sum(replies) / len(replies), 4)
                else:  # which source answered: the compiled plans, the model's Cypher, the vote (None: unanswered)
                    for src in sources:
                        summary[f"{key}/answered_by/{src}"] = summary.get(f"{key}/answered_by/{src}", 0) + 1
                by_kind: dict[str, list[float]] = {}
                for q, sc in zip(questions, scores):
                    by_kind.setdefault(q["kind"], []).append(sc.hits1_strict)
                for kind, vals in sorted(by_kind.items()):
                    summary[f"{key}/by_kind/{kind}/hits1_strict"] = round(sum(vals) / len(vals), 4)
    if args.metaqa_property_home:
        run_metaqa(args, summary, rows)
    llm_model = served_weights()
    config = {"systems": names, "sets": args.sets, "sgr_options": args.sgr_option, "limit": args.limit, "peer_max_tokens": PEER_MAX_TOKENS,
              "model": llm_model, "metaqa_sample": args.metaqa_sample if args.metaqa_property_home else None,
              "metaqa_methods": args.metaqa_methods if args.metaqa_entity_home else None,
              "metaqa_hops": args.metaqa_hops if args.metaqa_property_home else None}
    write_result(args.out, {"summary": summary, "config": config, "rows": rows})
    print(json.dumps({k: v for k, v in summary.items() if "/by_kind/" not in k}, indent=1))


if __name__ == "__main__":
    main()
