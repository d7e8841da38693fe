"""Does each cue-word rule of :mod:`sgr.core.lexicon` hold up on dev data? Every answer with the rule against every
answer without it, on the CWQ dev questions the rule fires on.

Several rules were written after reading WebQSP *test* misses (whole-word type names, "how many years" as a quantity,
now/today/current/recent as "latest", college ↔ university); this benchmark decides whether each stays: it is kept
when it fires on some dev questions and, on those, gains at least as many strict Hits@1 as it loses (a rule no dev
question exercises has no evidence for it, and goes: "how many years/times/…" as a quantity fired on no CWQ dev and
no WebQSP train question, and was removed after the first run). A
rule is switched off by replacing what it reads with an empty or never-matching value (monkeypatching the modules
for this process only). Method: ``sgr-compiled`` (no model, deterministic, so a difference is the rule's). A rule
that fires on more than ``--max-per-rule`` questions is measured on a seeded sample of them.

    python bench/lexicon.py          # NEO4J_URI: the WebQSP slice + CWQ dev store

Writes ``bench/results/lexicon.json``: summary ``<rule>/fires``, ``<rule>/hits1_with``, ``<rule>/hits1_without``,
``<rule>/gained``, ``<rule>/lost``, ``<rule>/kept`` (1 when the rule holds up on dev).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from record import RESULTS, write_result  # noqa: E402
from sgr.core import lexicon  # noqa: E402
from sgr.datasets import load_dataset  # noqa: E402
from sgr.evaluation.metrics.hits1_strict import hits1_strict  # noqa: E402
from sgr.graph.store import GraphStore  # noqa: E402
from sgr.methods.base import MethodContext  # noqa: E402
from sgr.methods.registry import create_method  # noqa: E402

NEVER = re.compile(r"(?!x)x")


@contextmanager
def patched(*changes: tuple[Any, str, Any]) -> Iterator[None]:
    old = [(obj, name, getattr(obj, name)) for obj, name, _ in changes]
    try:
        for obj, name, value in changes:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in old:
            setattr(obj, name, value)


def _rules() -> dict[str, tuple[re.Pattern[str], Callable[[], Any]]]:
    """rule → (the questions it fires on, a context manager that switches it off)."""
    import cypher.compile as comp
    import cypher.conditions as cond
    import sgr.methods.sgr.constraints as cons
    import sgr.methods.sgr.schema as schema

    now = {"now", "today", "current", "currently", "recent", "most recent"}
    ordinal = re.compile(r"\b(" + "|".join(map(re.escape, [w for w in lexicon.ORDINAL_WORDS if w not in now]))
                         + r"|\d+(?:st|nd|rd|th))\b", re.I)

    def prefix_name(type_name: str, answer: str) -> str:  # the name test before the whole-word rule
        pattern = r"(?s).*\b(" + "|".join(lexicon.NAME_WORDS.get(type_name, (type_name,))) + r").*"
        return f"toLower(coalesce({answer}.name, '')) =~ {cond.cypher_literal(pattern)}"

    return {
        "latest_now": (re.compile(r"\b(now|today|current|currently|recent)\b", re.I),
                       lambda: patched((cons, "LATEST", lexicon.LATEST - now), (schema, "ORDINAL", ordinal))),
        "name_words": (re.compile(r"\b(college|university)\b", re.I), lambda: patched((cond, "NAME_WORDS", {}))),
        "whole_word_type": (re.compile(r"\b(what|which)\s+[a-z]+", re.I),
                            lambda: patched((comp, "name_condition", prefix_name))),
        "ranked_number": (lexicon.RANKED_NUMBER, lambda: patched((schema, "RANKED_NUMBER", NEVER))),
    }


def answer_all(store: GraphStore, questions: list) -> dict[str, float]:  # noqa: ANN001
    method = create_method("sgr-compiled", MethodContext(store=store, options={}))
    out = {}
    for q in questions:
        pred = method.answer(q)
        out[q.id] = hits1_strict(pred.answer_texts, q.answers)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rules", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--max-per-rule", type=int, default=300, help="questions per rule at most (seeded sample)")
    ap.add_argument("--out", type=Path, default=RESULTS / "lexicon.json")
    args = ap.parse_args()
    questions = load_dataset("cwq").questions
    rules = _rules()
    chosen = [r for r in args.rules.split(",") if r] or list(rules)
    summary: dict[str, float] = {}
    details: dict[str, Any] = {}
    with GraphStore.from_settings() as store:
        for name in chosen:
            fires, off = rules[name]
            fired = [q for q in questions if fires.search(q.text)]
            qs = random.Random(0).sample(fired, args.max_per_rule) if len(fired) > args.max_per_rule else fired
            with_rule = answer_all(store, qs)
            with off():
                without = answer_all(store, qs)
            gained = [q.id for q in qs if with_rule[q.id] > without[q.id]]
            lost = [q.id for q in qs if with_rule[q.id] < without[q.id]]
            n = max(1, len(qs))
            summary |= {f"{name}/fires": len(fired), f"{name}/measured": len(qs), f"{name}/hits1_with": round(sum(with_rule.values()) / n, 4),
                        f"{name}/hits1_without": round(sum(without.values()) / n, 4), f"{name}/gained": len(gained),
                        f"{name}/lost": len(lost), f"{name}/kept": int(bool(qs) and len(gained) >= len(lost))}
            details[name] = {"gained": gained, "lost": lost}
            print(name, {k.split("/")[1]: v for k, v in summary.items() if k.startswith(name + "/")}, flush=True)
    write_result(args.out, {"summary": summary, "details": details, "method": "sgr-compiled",
                            "data": f"CWQ dev (1,180; at most {args.max_per_rule} per rule, seed 0)"})
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
