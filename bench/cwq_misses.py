"""Why SGR misses CWQ dev questions, by CWQ type and cause, and what the decision of this checkout answers on them.

    .venv/bin/python bench/cwq_misses.py --uri bolt://… RUN_DIR [RUN_DIR …] [--out bench/results/cwq_misses.json]

A RUN_DIR is one ``sgr eval`` run folder of ``sgr`` on CWQ dev questions (``predictions.jsonl`` with each question's
decision inputs, ``run.json``); ``--uri`` is the Neo4j of the graph the run answered on (only read). Each strict
Hits@1 miss is in the first cause that holds, read from the graph, the CWQ SPARQL (``--cwq``, the dev file) and the
run's own record:

* ``no_gold_node`` — no gold answer is a node of the graph (the evidence triples lack it);
* ``no_topic_node`` — no topic entity the dataset gives is a node (the linker then takes another node);
* ``unreachable`` — no gold answer within 8 edges of a topic entity;
* ``bridge`` — the top answer lies on a shortest walk from a topic entity to a gold answer: a composition that
  stopped at its bridge ("the state flower of the state that …" → the state);
* ``literal`` — the SPARQL compares or orders by a literal (a date, a number, a string) and a gold answer is among
  the candidates or voting paths: the graph holds no literal, so C_q has nothing to decide by;
* ``join`` — the question gives two or more topic entities that are nodes, a gold answer is among the candidates or
  votes, and it meets (directly or through one CVT) more of them than the top answer does;
* ``tied`` — a gold answer shares the top answer's score (strict Hits@1's order among equals);
* ``decided`` — a gold answer is among the candidates or votes and another path or answer was chosen;
* ``deep`` — no gold answer among them, and the nearest is more than 2 hops (CVTs free) from a topic entity;
* ``not_retrieved`` — no gold answer among them, within 2 hops: R_q or G_q's ranking left its path out.

Per run, ``hits1_replayed`` is strict Hits@1 when this checkout's :func:`sgr.methods.sgr.decision.decide` decides
each question's stored inputs again (SGRConfig's defaults with the run's own decision options; questions answered
in a second round keep their stored answer): a decision change measured without the model.

Output: ``summary`` keys ``<label>/questions``, ``<label>/hits1``, ``<label>/hits1_replayed``, ``<label>/<type>/n``,
``<label>/<type>/hits1``, ``<label>/<cause>``, ``<label>/<type>/<cause>``, and the same over all runs under
``all/…``; ``misses``: one row per miss (label, type, cause, question, top answer, gold); a table in the ``.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402
from sgr.core.config import shared_data_dir  # noqa: E402
from sgr.core.text import normalize  # noqa: E402
from sgr.evaluation.metrics.hits1_strict import hits1_strict  # noqa: E402
from sgr.evaluation.predictions import read_predictions  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.sgr.config import config_from_options  # noqa: E402
from sgr.methods.sgr.decision import DecisionInputs, DecisionParams, decide  # noqa: E402

CAUSES = ("no_gold_node", "no_topic_node", "unreachable", "bridge", "literal", "join", "tied", "decided", "deep",
          "not_retrieved")
TYPES = ("composition", "conjunction", "comparative", "superlative")
MAX_EDGES = 8
#: a SPARQL condition on a literal: a FILTER on a value or a typed string, an ORDER BY, a literal object
LITERAL = re.compile(r'FILTER \((?:xsd:|\?num|str\(\?sk)|ORDER BY|"[^"]*"(?:\^\^|@)|\s"[^"]+"\s*\.')


@dataclass
class Graph:
    """The few read-only questions the causes ask of the run's graph."""

    store: GraphStore

    def node(self, name: str) -> str | None:
        rows = self.store.read("MATCH (n:Entity) WHERE n.id = $x OR n.name = $x RETURN n.id AS id LIMIT 1", {"x": name})
        return rows[0]["id"] if rows else None

    def walk(self, a: str, b: str) -> list[str] | None:
        """The named inner nodes of a shortest walk from ``a`` to ``b`` (CVTs left out); None when there is none."""
        if a == b:
            return []
        rows = self.store.read(f"MATCH (x:Entity {{id: $a}}), (y:Entity {{id: $b}}) "
                               f"MATCH p = shortestPath((x)-[*..{MAX_EDGES}]-(y)) "
                               "RETURN [n IN nodes(p)[1..-1] WHERE NOT n:CVT | n.id] AS inner", {"a": a, "b": b})
        return rows[0]["inner"] if rows else None

    def meets(self, node: str, others: list[str]) -> int:
        """How many of ``others`` the node is, or meets directly or through one CVT."""
        rows = self.store.read("MATCH (x:Entity {id: $x}) UNWIND $o AS o "
                               "RETURN count(CASE WHEN o = $x OR EXISTS { (x)--(:Entity {id: o}) } "
                               "OR EXISTS { (x)--(:CVT)--(:Entity {id: o}) } THEN 1 END) AS n", {"x": node, "o": others})
        return int(rows[0]["n"]) if rows else 0


def cause(rec: dict[str, Any], sparql: str, graph: Graph) -> str:
    """The first cause of the module docstring that holds for the miss ``rec``."""
    gold = {normalize(g) for g in rec["gold"]}
    golds = [g for g in (graph.node(x) for x in rec["gold"][:8]) if g]
    topics = [t for t in (graph.node(x) for x in rec.get("topic_entities") or []) if t]
    if not golds:
        return "no_gold_node"
    if not topics:
        return "no_topic_node"
    walks = [w for t in topics for g in golds[:4] if (w := graph.walk(t, g)) is not None]
    if not walks:
        return "unreachable"
    answers = rec.get("answers") or []
    top = graph.node(answers[0]["text"]) if answers else None
    if top and any(top in w for w in walks):
        return "bridge"
    inputs = ((rec.get("extra") or {}).get("decision") or {}).get("inputs") or {}
    seen = {normalize(c[0]) for c in inputs.get("candidates", [])} | {normalize(v[0]) for v in inputs.get("votes", [])}
    present = bool(gold & seen) or any(normalize(a["text"]) in gold for a in answers)
    body = sparql.split("WHERE", 1)[-1]
    if present and LITERAL.search(body):
        return "literal"
    if present and len(topics) > 1 and top and graph.meets(golds[0], topics) > graph.meets(top, topics):
        return "join"
    if present and any(normalize(a["text"]) in gold and abs(a["score"] - answers[0]["score"]) < 1e-9
                       for a in answers[1:]):
        return "tied"
    if present:
        return "decided"
    return "deep" if min(len(w) for w in walks) + 1 > 2 else "not_retrieved"


def replayed_hit(rec: dict[str, Any], params: DecisionParams) -> bool:
    """Strict Hits@1 of this checkout's decision on the record's stored inputs (the stored hit when there are none
    or a second round answered)."""
    stored = bool(rec["scores"]["hits1_strict"])
    inputs = ((rec.get("extra") or {}).get("decision") or {}).get("inputs")
    if not inputs or len((rec.get("extra") or {}).get("rounds") or []) != 1:
        return stored
    d = decide(DecisionInputs.from_dict(inputs), params)
    return bool(hits1_strict([a.text for a in d.answers], rec["gold"]))


def analyse(run_dir: Path, sparql: dict[str, str], graph: Graph) -> tuple[Counter, list[dict[str, Any]]]:
    """The counts of one run folder (keys as in the summary, without the label) and its miss rows."""
    recs = [r for r in read_predictions(run_dir / "predictions.jsonl").values() if r.get("gold")]
    if not recs:
        raise SystemExit(f"{run_dir}: no scored predictions (predictions.jsonl missing or empty)")
    options = json.loads((run_dir / "run.json").read_text()).get("options", {})
    params = DecisionParams.from_config(config_from_options(
        "sgr", {k: v for k, v in options.items() if k in DecisionParams.__dataclass_fields__}))
    counts: Counter = Counter()
    rows = []
    for r in recs:
        kind = r.get("qtype") or "unknown"
        hit = bool(r["scores"]["hits1_strict"])
        counts.update({"questions": 1, f"{kind}/n": 1, "hits1": hit, f"{kind}/hits1": hit,
                       "hits1_replayed": replayed_hit(r, params)})
        if not hit:
            c = cause(r, sparql.get(r["id"], ""), graph)
            counts.update({c: 1, f"{kind}/{c}": 1})
            rows.append({"id": r["id"], "type": kind, "cause": c, "question": r["question"],
                         "top": r["answers"][0]["text"] if r.get("answers") else None, "gold": r["gold"][:3]})
    return counts, rows


def table(counts: Counter, label: str) -> str:
    lines = [f"| cause ({label}) | " + " | ".join(TYPES) + " | all |", "|---" * (len(TYPES) + 2) + "|"]
    for c in CAUSES:
        lines.append(f"| {c} | " + " | ".join(str(counts[f"{t}/{c}"]) for t in TYPES) + f" | {counts[c]} |")
    lines.append("| **hits** | " + " | ".join(f"{counts[f'{t}/hits1']} / {counts[f'{t}/n']}" for t in TYPES)
                 + f" | {counts['hits1']} / {counts['questions']} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="sgr eval run folders of CWQ dev questions")
    ap.add_argument("--uri", required=True, help="the Neo4j of the runs' graph (read only)")
    ap.add_argument("--cwq", type=Path, default=shared_data_dir() / "cwq" / "cwq_dev.jsonl",
                    help="the CWQ dev file (its SPARQL)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "cwq_misses.json")
    args = ap.parse_args()
    sparql = {}
    with open(args.cwq, encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            sparql[r["id"]] = r.get("sparql", "")
    store = GraphStore(args.uri)
    summary: dict[str, Any] = {}
    total: Counter = Counter()
    misses, tables = [], []
    try:
        for run in args.runs:
            label = run.resolve().name
            counts, rows = analyse(run, sparql, Graph(store))
            summary |= {f"{label}/{k}": v for k, v in sorted(counts.items())}
            total += counts
            misses += [{"run": label, **row} for row in rows]
            tables.append(table(counts, label))
    finally:
        store.close()
    summary |= {f"all/{k}": v for k, v in sorted(total.items())}
    write_result(args.out, {"summary": summary, "misses": misses,
                            "config": {"runs": [str(r) for r in args.runs], "cwq": str(args.cwq)}})
    md = "# Why sgr misses CWQ dev (`bench/cwq_misses.py`)\n\n" + "\n\n".join([*tables, table(total, "all")]) + "\n"
    args.out.with_suffix(".md").write_text(md)
    print(md)
    print({k: summary[k] for k in summary if k.endswith(("/hits1", "/hits1_replayed", "/questions")) and
           k.count("/") == 1})


if __name__ == "__main__":
    main()
