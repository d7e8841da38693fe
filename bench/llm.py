"""Benchmark: does constrained decoding make the small local model's outputs usable?

On a fixed-seed sample of WebQSP-slice questions (default 200, seed 0), with the whole slice loaded into Neo4j, the
local model (SmolLM2-135M-Instruct via `sgr llm serve`) is asked, each time with and without constraints:

1. **schema extraction** (JSON): the topic entities and 1-3 relations chosen from the question's candidate relations.
   Constrained: llama.cpp ``response_format={"type": "json_object", "schema": S}`` with the relations as an enum.
   *parse rate* = share of replies that are valid JSON AND validate against S (first attempt, no repair).
2. **NL→Cypher**: a MATCH…RETURN query over the candidate relation types. Constrained: the GBNF grammar of
   :func:`cypher.grammar.cypher_grammar` (only the candidate types and topic entity names).
   *EXPLAIN ok* = Neo4j's ``EXPLAIN`` raises no error and gives no unknown relationship-type/label/property notification.

Candidate relations of a question: the relationship types within 2 undirected hops of its topic entities in Neo4j,
ranked by MiniLM cosine similarity to the question (:func:`sgr.llm.encoders.embed_texts`), top ``--candidates``.
Every prompt is a system message plus two worked examples. All calls are cached (``SGR_HOME/cache/llm``), so a rerun
is free; ``tokens_per_s`` is measured separately on uncached calls (median of 3 generations of up to 128 tokens).

Run::

    SGR_HOME=/tmp/sgr-llm .venv/bin/sgr neo4j start && SGR_HOME=/tmp/sgr-llm .venv/bin/sgr llm serve
    SGR_HOME=/tmp/sgr-llm .venv/bin/python bench/llm.py [--n 200] [--seed 0]

Writes ``bench/results/llm.json`` (``summary`` keys: parse_rate_constrained, parse_rate_free, explain_ok_constrained,
explain_ok_free, tokens_per_s, …; ``provenance`` by ``bench/record.py``) and prints a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402

from cypher.grammar import cypher_grammar  # noqa: E402
from sgr.core.config import cache_dir, sgr_home, shared_data_dir  # noqa: E402
from sgr.llm.encoders import embed_texts  # noqa: E402
from sgr.core.errors import CypherError  # noqa: E402
from sgr.llm.client import LLM, CallRecord  # noqa: E402
from sgr.graph.store import GraphStore, relation_text  # noqa: E402

DATA = shared_data_dir()
WEBQSP = DATA / "webqsp" / "webqsp_mini.jsonl"
SOURCE_PATH = "bench:webqsp_mini.jsonl"

# ----------------------------------------------------------------------------------------------
# prompts (system message + two worked examples each)
# ----------------------------------------------------------------------------------------------
JSON_SCHEMA_SYSTEM = (
    "You read a question about a knowledge graph and return JSON with two keys: \"entities\", the names of the "
    "things the question is about, copied from the question; and \"relations\", the one to three relations from "
    "the candidate list that lead from those entities to the answer, best first. Use only candidate relations. "
    "Reply with the JSON object only.")
SCHEMA_EXAMPLES = [
    ("Question: who directed the godfather?\nCandidate relations: film.film.directed_by, film.film.written_by, "
     "film.film.starring, film.director.film",
     '{"entities": ["The Godfather"], "relations": ["film.film.directed_by"]}'),
    ("Question: who was the governor of ohio in 2011?\nCandidate relations: location.location.contains, "
     "government.governmental_jurisdiction.governing_officials, government.government_position_held.office_holder, "
     "location.us_state.capital",
     '{"entities": ["Ohio"], "relations": ["government.governmental_jurisdiction.governing_officials", '
     '"government.government_position_held.office_holder"]}'),
]

CYPHER_SYSTEM = (
    "You translate a question into one Cypher query for Neo4j. Nodes are (:Entity {name}); relationship types are "
    "Freebase relation names written in backticks. Start from the topic entity, follow one or two of the given "
    "relation types, and return the answer node's name as `answer`. Reply with the query only.")
CYPHER_EXAMPLES = [
    ("Question: who was the governor of ohio in 2011?\nTopic entity: \"Ohio\"\nRelation types: "
     "`government.governmental_jurisdiction.governing_officials`, `government.government_position_held.office_holder`, "
     "`location.location.contains`",
     'MATCH (e:Entity {name: "Ohio"})-[:`government.governmental_jurisdiction.governing_officials`]-(x1:Entity)'
     '-[:`government.government_position_held.office_holder`]-(x:Entity) RETURN DISTINCT x.name AS answer'),
    ("Question: who directed the godfather?\nTopic entity: \"The Godfather\"\nRelation types: "
     "`film.film.directed_by`, `film.film.starring`, `film.director.film`",
     'MATCH (e:Entity {name: "The Godfather"})-[:`film.film.directed_by`]-(x:Entity) RETURN DISTINCT x.name AS answer'),
]


def few_shot(system: str, examples: list[tuple[str, str]], user: str) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [SystemMessage(content=system)]
    for q, a in examples:
        msgs += [HumanMessage(content=q), AIMessage(content=a)]
    msgs.append(HumanMessage(content=user))
    return msgs


def schema_model(candidates: list[str]) -> type[BaseModel]:
    """The output schema of schema extraction, relations restricted to the candidates (an enum)."""
    rel_type = Literal[tuple(candidates)]  # type: ignore[valid-type]
    return create_model("SchemaExtraction",
                        entities=(list[str], Field(min_length=1, max_length=3)),
                        relations=(list[rel_type], Field(min_length=1, max_length=3)))


# ----------------------------------------------------------------------------------------------
# graph
# ----------------------------------------------------------------------------------------------
def read_records() -> list[dict[str, Any]]:
    with open(WEBQSP) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ensure_loaded(store: GraphStore, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Load every record's graph once (a Source node marks a finished load of this file version)."""
    from loaders.writer import GraphBatch, record_source, write_graph

    sha = hashlib.sha256(WEBQSP.read_bytes()).hexdigest()
    store.ensure_schema()
    done = store.read("MATCH (s:Source {path: $p}) RETURN s.sha256 AS sha", {"p": SOURCE_PATH})
    if done and done[0]["sha"] == sha:
        return {"loaded": False, "seconds": 0.0}
    t0 = time.perf_counter()
    batch = GraphBatch()
    for rec in records:
        for h, r, t in rec["graph"]:
            batch.add_triple(h, r, t)
    stats = write_graph(store, batch)
    record_source(store, SOURCE_PATH, sha, len(batch.triples))
    return {"loaded": True, "seconds": round(time.perf_counter() - t0, 1), "triples": stats.triples,
            "entities": stats.entities}


def neighbourhood_types(store: GraphStore, names: list[str]) -> list[str]:
    """Relationship types within 2 undirected hops of the topic entities."""
    rows = store.read(
        "MATCH (e:Entity) WHERE e.id IN $ids OR e.name IN $ids "
        "MATCH (e)-[r1]-(m) WITH collect(DISTINCT type(r1)) AS t1, collect(DISTINCT m) AS ms "
        "UNWIND ms AS m OPTIONAL MATCH (m)-[r2]-() "
        "RETURN t1, collect(DISTINCT type(r2)) AS t2", {"ids": names})
    types: set[str] = set()
    for row in rows:
        types.update(row["t1"] or [])
        types.update(row["t2"] or [])
    return sorted(t for t in types if not t.startswith("SGR_"))


def candidate_relations(question: str, types: list[str], k: int) -> list[str]:
    if len(types) <= k:
        return types
    q = embed_texts([question])[0]
    r = embed_texts([relation_text(t) for t in types])
    order = sorted(range(len(types)), key=lambda i: -float(r[i] @ q))
    return [types[i] for i in order[:k]]


# ----------------------------------------------------------------------------------------------
# checks
# ----------------------------------------------------------------------------------------------
def extract_cypher(text: str) -> str:
    """Light extraction for the *free* condition: code fence body, from the first MATCH, up to a blank line/;."""
    fence = re.search(r"```(?:cypher)?\s*(.*?)```", text, re.S | re.I)
    if fence:
        text = fence.group(1)
    m = re.search(r"\bMATCH\b", text, re.I)
    if m:
        text = text[m.start():]
    text = re.split(r"\n\s*\n|;", text, maxsplit=1)[0]
    return text.strip()


@dataclass
class ExplainCheck:
    ok: bool
    error: str | None
    unknown: list[str]


def explain_check(store: GraphStore, query: str) -> ExplainCheck:
    if not query:
        return ExplainCheck(False, "empty", [])
    try:
        notes = store.explain(query)
    except CypherError as exc:
        return ExplainCheck(False, " ".join(str(exc).split())[:160], [])
    unknown = [n["code"].rsplit(".", 1)[-1] for n in notes if "Unknown" in (n.get("code") or "")]
    return ExplainCheck(not unknown, None, unknown)


def answers_hit(store: GraphStore, query: str, gold: list[str]) -> bool:
    try:
        rows = store.run_generated(query, timeout_s=10, row_cap=200).rows
    except Exception:  # noqa: BLE001 - any failure means no answer
        return False
    got = {str(v).strip().lower() for row in rows for v in row.values() if v is not None}
    return bool(got & {str(g).strip().lower() for g in gold if g is not None})


def measure_decode_speed(llm: LLM, reps: int = 3) -> dict[str, float]:
    """Uncached generations of up to 128 tokens: completion tokens / wall seconds, median over ``reps``."""
    fresh = LLM(llm.chat, name=llm.name, cache_dir=None, constrained=False, logprobs=False, dialect=llm.dialect,
                base_url=llm.base_url)
    speeds, seconds, tokens = [], [], []
    for i in range(reps):
        msgs = [SystemMessage(content="You are a helpful assistant."),
                HumanMessage(content=f"Write a short story about a robot who learns to paint (version {i}).")]
        fresh.complete(msgs, stage="speed", max_tokens=128)
        rec = fresh.last_call
        assert rec is not None
        speeds.append(rec.completion_tokens / rec.seconds if rec.seconds else 0.0)
        seconds.append(rec.seconds)
        tokens.append(rec.completion_tokens)
    return {"tokens_per_s": round(statistics.median(speeds), 1), "seconds": [round(s, 2) for s in seconds],
            "completion_tokens": tokens}


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    records = read_records()
    store = GraphStore.from_settings()
    store.verify()
    load = ensure_loaded(store, records)
    rng = random.Random(args.seed)
    sample = rng.sample(records, args.n)

    constrained = LLM.from_settings(cache=True)
    if not constrained.constrained:
        raise SystemExit("bench/llm.py needs an endpoint with llama.cpp-style constraints (the local server)")
    free = LLM(constrained.chat, name=constrained.name, cache_dir=cache_dir("llm"), constrained=False,
               logprobs=False, dialect=constrained.dialect, base_url=constrained.base_url)
    speed = measure_decode_speed(constrained)

    calls: list[CallRecord] = []
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for rec in sample:
        topics = list(rec.get("q_entity") or [])
        types = neighbourhood_types(store, topics)
        cands = candidate_relations(rec["question"], types, args.candidates)
        gold_rels = {r for path in rec.get("ground_paths") or [] for r in path}
        row: dict[str, Any] = {"id": rec["id"], "question": rec["question"], "topics": topics, "candidates": cands,
                               "gold_in_candidates": bool(gold_rels & set(cands))}
        if not cands:
            row["skipped"] = "no topic entity in the graph"
        rows.append(row)
    by_id = {rec["id"]: rec for rec in sample}
    asked = [r for r in rows if "skipped" not in r]

    # One phase per (task, condition): consecutive prompts share their system message + examples, which the
    # llama.cpp server keeps in its KV cache (prefix reuse), so only each question's own tokens are evaluated.
    for label, llm in (("constrained", constrained), ("free", free)):
        for n, row in enumerate(asked, 1):
            rec = by_id[row["id"]]
            gold_rels = {r for path in rec.get("ground_paths") or [] for r in path}
            user = f"Question: {row['question']}\nCandidate relations: {', '.join(row['candidates'])}"
            res = llm.try_structured(few_shot(JSON_SCHEMA_SYSTEM, SCHEMA_EXAMPLES, user), schema_model(row["candidates"]),
                                     stage="schema", max_retries=0, max_tokens=args.json_max_tokens)
            calls.append(llm.last_call)  # type: ignore[arg-type]
            raw = res.attempts[0]
            try:
                json.loads(raw)
                json_ok = True
            except ValueError:
                json_ok = False
            value = res.value
            row[f"schema_{label}"] = {
                "raw": raw[:400], "json_ok": json_ok, "parsed": value is not None,
                "error": res.errors[0][:300] if res.errors else None,
                "relation_hit": bool(value and set(value.relations) & gold_rels),  # type: ignore[attr-defined]
            }
            _progress(f"schema/{label}", n, len(asked), t_start)
    for label, llm in (("constrained", constrained), ("free", free)):
        for n, row in enumerate(asked, 1):
            rec = by_id[row["id"]]
            topics, cands = row["topics"], row["candidates"]
            cy_user = (f"Question: {row['question']}\nTopic entity: " + ", ".join(f'"{t}"' for t in topics)
                       + "\nRelation types: " + ", ".join(f"`{c}`" for c in cands))
            msgs = few_shot(CYPHER_SYSTEM, CYPHER_EXAMPLES, cy_user)
            grammar = cypher_grammar(cands, topics, max_hops=args.max_hops) if label == "constrained" else None
            text = llm.complete(msgs, stage="cypher", grammar=grammar, max_tokens=args.cypher_max_tokens)
            calls.append(llm.last_call)  # type: ignore[arg-type]
            query = text.strip() if grammar else extract_cypher(text)
            check = explain_check(store, query)
            row[f"cypher_{label}"] = {"raw": text[:400], "query": query[:400], "explain_ok": check.ok,
                                      "error": check.error, "unknown": check.unknown,
                                      "answer_hit": check.ok and answers_hit(store, query, rec["answer"])}
            _progress(f"cypher/{label}", n, len(asked), t_start)

    real = [c for c in calls if c is not None]
    comp = sum(c.completion_tokens for c in real)
    secs = sum(c.seconds for c in real)
    install_s = args.install_seconds
    if install_s is None:
        for home in (sgr_home(), Path.home() / ".sgr"):
            f = home / "llm" / "install.json"
            if f.exists():
                install_s = json.loads(f.read_text()).get("seconds")
                break
    summary = {
        "parse_rate_constrained": _rate(asked, "schema_constrained", "parsed"),
        "parse_rate_free": _rate(asked, "schema_free", "parsed"),
        "json_ok_constrained": _rate(asked, "schema_constrained", "json_ok"),
        "json_ok_free": _rate(asked, "schema_free", "json_ok"),
        "explain_ok_constrained": _rate(asked, "cypher_constrained", "explain_ok"),
        "explain_ok_free": _rate(asked, "cypher_free", "explain_ok"),
        "answer_hit_constrained": _rate(asked, "cypher_constrained", "answer_hit"),
        "answer_hit_free": _rate(asked, "cypher_free", "answer_hit"),
        "relation_hit_constrained": _rate(asked, "schema_constrained", "relation_hit"),
        "relation_hit_free": _rate(asked, "schema_free", "relation_hit"),
        "tokens_per_s": speed["tokens_per_s"],
        "end_to_end_completion_tokens_per_s": round(comp / secs, 1) if secs else None,
        "median_seconds_per_call": round(statistics.median([c.seconds for c in real]), 2) if real else None,
        "median_prompt_tokens": statistics.median([c.prompt_tokens for c in real]) if real else None,
        "install_seconds": install_s,
        "reinstall_seconds": args.reinstall_seconds,
        "questions": len(asked),
    }
    return {
        "summary": summary,
        "config": {"n": args.n, "seed": args.seed, "candidates": args.candidates, "max_hops": args.max_hops,
                   "json_max_tokens": args.json_max_tokens, "cypher_max_tokens": args.cypher_max_tokens,
                   "model": constrained.name, "skipped": len(rows) - len(asked),
                   "gold_relation_in_candidates": round(sum(r.get("gold_in_candidates", False) for r in rows)
                                                        / max(1, len(rows)), 3),
                   "calls": len(real), "cached_calls": sum(c.cached for c in real),
                   "wall_seconds": round(time.perf_counter() - t_start, 1), "load": load},
        "speed": speed,
        "questions": rows,
    }


def _progress(phase: str, n: int, total: int, t_start: float) -> None:
    if n % 25 == 0 or n == total:
        print(f"{phase}: {n}/{total}  {time.perf_counter() - t_start:.0f}s", flush=True)


def _rate(rows: list[dict[str, Any]], part: str, key: str) -> float:
    return round(sum(bool(r[part][key]) for r in rows) / len(rows), 3) if rows else 0.0


def print_table(result: dict[str, Any]) -> None:
    s = result["summary"]
    print(f"\nLocal LLM ({result['config']['model']}), {s['questions']} WebQSP questions, seed {result['config']['seed']}")
    print(f"{'metric':<34}{'constrained':>12}{'free':>10}")
    for label, key in (("schema JSON parses+validates", "parse_rate"), ("schema reply is JSON", "json_ok"),
                       ("schema picks a gold relation", "relation_hit"), ("Cypher passes EXPLAIN", "explain_ok"),
                       ("Cypher returns a gold answer", "answer_hit")):
        print(f"{label:<34}{s[key + '_constrained']:>12.3f}{s[key + '_free']:>10.3f}")
    print(f"decode tokens/s {s['tokens_per_s']}, end-to-end completion tokens/s {s['end_to_end_completion_tokens_per_s']}, "
          f"median s/call {s['median_seconds_per_call']}, median prompt tokens {s['median_prompt_tokens']}, "
          f"install {s['install_seconds']} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--candidates", type=int, default=8)
    p.add_argument("--max-hops", type=int, default=2)
    p.add_argument("--json-max-tokens", type=int, default=80)
    p.add_argument("--cypher-max-tokens", type=int, default=120)
    p.add_argument("--install-seconds", type=float, default=None,
                   help="build+install time of scripts/install_llm.sh (default: SGR_HOME/llm/install.json)")
    p.add_argument("--reinstall-seconds", type=float, default=None,
                   help="time of a second scripts/install_llm.sh into a fresh venv (pip's cached wheel)")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "llm.json")
    args = p.parse_args()
    result = run(args)
    write_result(args.out, result)
    print_table(result)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
