"""R_q from the model under a graph grammar: the relation paths that exist around V_q, as a trie and a GBNF
grammar, and the model's N-best paths with their probabilities (GCR's KG-Trie over the store; SGR eq. 3).

**The trie.** For each linked topic entity, :func:`relation_paths` reads from Neo4j every relation path of
1..``max_relations`` relationship types that leads within ``max_hops`` entity hops to a named node (CVT nodes
are transparent: ``representatives > office_holder`` through a CVT is one hop; a path never ends on a CVT, and
leaves one by another role than the one it entered by).
The walk is breadth-first, one query per depth, with ``node_cap`` neighbours per node and ``frontier_cap`` nodes
per path kept, so hubs stay bounded. The result is cached per (store, graph version, entity, bounds).

**The grammar.** :func:`path_grammar` turns the trie into GBNF whose terminals are the relation names, in the
line format of :mod:`sgr.methods.sgr.prompts` (``path: r1 > r2``), up to ``n_best`` lines, then optional
``constraint:`` lines with bounded values. Decoding under it can write only relation paths that exist from the
topic entities; when the trie holds more than ``max_paths`` paths, the embedding ranking pre-filters them
(mean relation similarity to the question) so that one grammar stays small.

**The probabilities.** The reply is generated once with token log-probabilities. For the i-th distinct path line,
ℓ_i is the mean log-probability of its tokens and

    ρ_i = exp(ℓ_i)                                  (geometric-mean token probability of the path, in [0, 1])

is the model's confidence in that path (SGR eq. 15), used as δ for the answers the path reaches (eq. 11).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sgr.core.lexicon import GRAMMAR_ORDINALS
from sgr.core.text import gbnf_literal
from sgr.graph.store import GraphStore
from sgr.methods.sgr.prompts import CONSTRAINT_PREFIX, PATH_PREFIX, PATH_SEPARATOR, parse_schema_reply

Step = tuple[str, str]  # (relationship type, "out" | "in")
RelPath = tuple[str, ...]

_CACHE: dict[tuple, dict[RelPath, list[tuple[str, ...]]]] = {}
_LOCK = threading.Lock()


@dataclass
class PathTrie:
    """Relation paths from the topic entities: relation names → the (seed id, steps with directions) realising them."""

    paths: dict[RelPath, list[tuple[str, tuple[Step, ...]]]] = field(default_factory=dict)

    def __contains__(self, rels: object) -> bool:
        return tuple(rels) in self.paths  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.paths)

    def children(self) -> dict:
        """The trie as nested dicts: relation → subtree; the key ``None`` marks a complete path."""
        root: dict = {}
        for rels in self.paths:
            node = root
            for r in rels:
                node = node.setdefault(r, {})
            node[None] = True
        return root


def relation_paths(store: GraphStore, seeds: Sequence[str], *, max_hops: int = 2, max_relations: int = 3,
                   node_cap: int = 200, frontier_cap: int = 50, graph_version: str | None = None) -> PathTrie:
    """The relation paths that exist from ``seeds`` (module docstring), each seed's walk cached."""
    version = graph_version or store.graph_version()
    trie = PathTrie()
    for seed in seeds:
        key = (store.uri, version, seed, max_hops, max_relations, node_cap, frontier_cap)
        with _LOCK:
            found = _CACHE.get(key)
        if found is None:
            found = _walk(store, seed, max_hops, max_relations, node_cap, frontier_cap)
            with _LOCK:
                _CACHE[key] = found
        for rels, variants in found.items():
            for steps in variants:
                trie.paths.setdefault(rels, []).append((seed, steps))  # type: ignore[arg-type]
    return trie


def _walk(store: GraphStore, seed: str, max_hops: int, max_relations: int, node_cap: int,
          frontier_cap: int) -> dict[RelPath, list[tuple[Step, ...]]]:
    # state: steps → (frontier node ids, entity hops so far, ends on a CVT)
    states: dict[tuple[Step, ...], tuple[list[str], int, bool]] = {(): ([seed], 0, False)}
    out: dict[RelPath, list[tuple[Step, ...]]] = {}
    for _depth in range(max_relations):
        expandable = {s: v for s, v in states.items() if v[1] < max_hops or v[2]}
        if not expandable:
            break
        ids = sorted({n for nodes, _, _ in expandable.values() for n in nodes})
        rows = store.read(
            "UNWIND $ids AS i MATCH (a:Entity {id: i}) "
            "CALL (a) { MATCH (a)-[r]-(b:Entity) WHERE NOT type(r) STARTS WITH 'SGR_' "
            "  RETURN type(r) AS rel, startNode(r) = a AS out, b.id AS dst, b:CVT AS cvt LIMIT $cap } "
            "RETURN i AS src, rel, out, dst, cvt", {"ids": ids, "cap": node_cap})
        by_src: dict[str, list[dict]] = {}
        for r in rows:
            by_src.setdefault(r["src"], []).append(r)
        nxt: dict[tuple[Step, ...], tuple[list[str], int, bool]] = {}
        for steps, (nodes, hops, in_cvt) in expandable.items():
            groups: dict[tuple[str, str, bool], list[str]] = {}
            back = (steps[-1][0], "in" if steps[-1][1] == "out" else "out") if in_cvt else None
            for n in nodes:
                for r in by_src.get(n, []):
                    if r["dst"] == seed or (r["rel"], "out" if r["out"] else "in") == back:
                        continue  # a CVT is left by another role than the one that entered it (no U-turn)
                    g = groups.setdefault((r["rel"], "out" if r["out"] else "in", bool(r["cvt"])), [])
                    if len(g) < frontier_cap and r["dst"] not in g:
                        g.append(r["dst"])
            for (rel, d, cvt), dsts in groups.items():
                new = steps + ((rel, d),)
                prev = nxt.get(new)
                merged = (prev[0] + [x for x in dsts if x not in prev[0]])[:frontier_cap] if prev else dsts
                nxt[new] = (merged, hops + (0 if cvt else 1), cvt)
                if not cvt:
                    rels = tuple(r for r, _ in new)
                    if new not in out.setdefault(rels, []):
                        out[rels].append(new)
        states = nxt
    return out


def prefilter(trie: PathTrie, score: Callable[[Sequence[str]], dict[str, float]], max_paths: int) -> PathTrie:
    """The ``max_paths`` paths with the highest mean relation score (the embedding ranking as a pre-filter)."""
    if len(trie) <= max_paths:
        return trie
    names = sorted({r for rels in trie.paths for r in rels})
    s = score(names)
    ranked = sorted(trie.paths, key=lambda rels: (-sum(s.get(r, 0.0) for r in rels) / len(rels), len(rels), rels))
    keep = set(ranked[:max_paths])
    return PathTrie({k: v for k, v in trie.paths.items() if k in keep})


def path_grammar(trie: PathTrie, n_best: int = 3, constraints: bool = True) -> str:
    """GBNF admitting 1..``n_best`` ``path:`` lines over exactly the trie's paths (then optional constraint lines)."""
    if not len(trie):
        raise ValueError("path_grammar needs at least one relation path")
    rules: list[str] = []
    counter = [0]

    def node_rule(node: dict) -> str:
        name = f"t{counter[0]}"
        counter[0] += 1
        alts = []
        for rel in sorted(k for k in node if k is not None):
            child = node[rel]
            more = [k for k in child if k is not None]
            lit = gbnf_literal(rel)
            if not more:
                alts.append(lit)
            else:
                sub = node_rule(child)
                sep = gbnf_literal(PATH_SEPARATOR)
                alts.append(f"{lit} ({sep} {sub})?" if None in child else f"{lit} {sep} {sub}")
        rules.append(f"{name} ::= " + " | ".join(alts))
        return name

    top = node_rule(trie.children())
    line = f"{gbnf_literal(PATH_PREFIX)} {top}"
    head = [f'root ::= line ("\\n" line){{0,{max(0, n_best - 1)}}}' + (' ("\\n" cons){0,2}' if constraints else ""),
            f"line ::= {line}"]
    if constraints:
        ords = " | ".join(gbnf_literal(w) for w in GRAMMAR_ORDINALS)
        head += [f'cons ::= {gbnf_literal(CONSTRAINT_PREFIX)} ("time = " [12] [0-9] [0-9] [0-9] | "ordinal = " ({ords}) '
                 '| "count = yes" | "type = " [a-z] [a-z] [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]? [a-z]?)']
    return "\n".join(head + rules[::-1]) + "\n"


@dataclass
class ModelPath:
    """One of the model's N-best relation paths with ρ = exp(mean token log-probability)."""

    relations: RelPath
    rho: float
    logprob: float  # sum of the path line's token log-probabilities
    variants: list[tuple[str, tuple[Step, ...]]] = field(default_factory=list)  # (seed id, steps) realising it


def score_reply(text: str, token_logprobs: Sequence[tuple[str, float]] | None,
                allowed: PathTrie | None = None) -> tuple[list[ModelPath], list[tuple[str, str]]]:
    """The reply's distinct paths (in order, only those in ``allowed``) with ρ, and its constraints.

    Token log-probabilities are assigned to lines by their characters; without any, ρ is NaN (unknown)."""
    paths, constraints = parse_schema_reply(text)
    line_lps: list[list[float]] = [[]]
    if token_logprobs:
        for tok, lp in token_logprobs:
            parts = tok.split("\n")
            if parts[0]:
                line_lps[-1].append(lp)
            for extra in parts[1:]:
                line_lps.append([lp] if extra else [])
    lines = text.split("\n")
    per_path: dict[RelPath, tuple[float, float]] = {}
    for i, raw in enumerate(lines):
        got, _ = parse_schema_reply(raw)
        if not got:
            continue
        rels = got[0]
        lps = line_lps[i] if i < len(line_lps) and token_logprobs else []
        mean = sum(lps) / len(lps) if lps else float("nan")
        if rels not in per_path:
            per_path[rels] = (math.exp(mean) if lps else float("nan"), sum(lps) if lps else float("nan"))
    out = [ModelPath(rels, *per_path[rels], variants=list(allowed.paths[rels]) if allowed is not None else [])
           for rels in paths if rels in per_path and (allowed is None or rels in allowed)]
    return out, constraints
