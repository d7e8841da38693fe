"""Stepwise inference: SCR's beam search (Lin et al., AAAI 2026, "Reasoning with Beam Search", eqs. 12–15).

From each topic entity e_0, every step scores the candidates {e_i} ∪ 𝒩(e_i) (never e_0, nor an edge walked)
with P(e | q_i, e_i) = softmax(cos(h_{q_i}, h_e)/τ) and keeps the top-K partial paths (eq. 12). Choosing
e_i itself ("stay") ends a path: e_i is its hypothesis answer. A path's probability is

    P(a, p | q) = Π_{i=1}^{|p|} P(e_i | q_{i−1}, e_{i−1})          (eq. 14, P(a | q, p) = 1 for a = end of p)

including the final "stay" factor. The K most probable finished paths form B_K (eq. 15); paths below
``min_prob`` (paper: 0.02) are dropped. Because a partial path's probability can only shrink, dropping
partial paths below the threshold during the search is exact. When every hypothesis of a topic entity
is below it, the best one is kept (so a question always gets one path — the greedy ablation depends on
it). Answers are ranked by ``answer_score``:

* ``"sum"`` (the paper's eq. 13): P(a | q) = Σ_{p ∈ B_K, end(p) = a} P(a, p | q);
* ``"geometric"``: s(a) = max_{p ∈ B_K, end(p) = a} P(a, p | q)^{1/(|p|+1)}, the geometric mean of the path's
  |p| + 1 step probabilities (its moves and the final "stay"). A product compares walks of different lengths
  unfairly — a walk that stops early has fewer factors below 1 — and the mean does not. The paths, their
  P(a, p | q) and the answer set are the same; which ranking a trained model uses is chosen on its validation
  questions (:func:`sgr.methods.scr.train.choose_answer_score`; measured: MetaQA 3-hop Hits@1 0.76 → 0.82 with
  ``geometric``, WebQSP 0.707 with ``sum`` against 0.669).
* ``"pattern"``: s(a) = max_{p ∈ B_K, end(p) = a} (Σ_{p' ∈ B_K, rel(p') = rel(p)} P(p', q))^{1/(|p|+1)}: the walks
  that follow one relation path (relations and directions, :func:`path_pattern`) pool their probability, scaled
  as the geometric ranking scales one walk; the answers of one relation path are ordered by their own walk's
  geometric score. The model spreads a step over equivalent entities (each film of an actor), so a
  multi-hop relation path's walks are each improbable while together they carry the model's belief; a walk
  that stops after one step does not split. Measured with one MetaQA checkpoint on 300 test questions per hop:
  3-hop 0.930 → 0.960 against ``geometric``, 2-hop 0.953 → 0.963, 1-hop 0.973 → 0.967.

The search is batched across questions: one GNN pass over the union of their G_q, one encoder call per
step for every live path of every question. After ``max_steps`` moves a path must stay.

:func:`single_step_search` is the ablation "w/o multi-step" (paper Table 4): q_0 against every entity of
G_q at once, the top-K entities kept, each explained by a shortest walk from the topic entity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from sgr.methods.scr.data import ScrSubgraph, _bfs
from sgr.methods.scr.model import StepCandidate, SCRModel, question_text, segment_log_softmax, step_candidates


@dataclass
class BeamPath:
    """A walk found by the search: ``nodes[0]`` a topic entity, ``nodes[-1]`` its hypothesis answer."""

    nodes: list[int]
    edges: list[int] = field(default_factory=list)
    directions: list[int] = field(default_factory=list)
    logp: float = 0.0
    finished: bool = False

    @property
    def prob(self) -> float:
        return math.exp(self.logp)

    @property
    def answer(self) -> int:
        return self.nodes[-1]


@dataclass
class SearchResult:
    """B_K for one question (best first) and its answers ranked by P(a | q)."""

    paths: list[BeamPath]
    answers: list[tuple[int, float]]
    encoder_calls: int = 0
    encoded_texts: int = 0


def path_steps(model: SCRModel, sg: ScrSubgraph, path: BeamPath) -> list[tuple[str, str]]:
    """The (r_i, e_i) texts a path has added to the question (eq. 8)."""
    steps = []
    for k, (e, d) in enumerate(zip(path.edges, path.directions)):
        cand = StepCandidate(path.nodes[k + 1], e, d)
        steps.append((model.relation_label(sg, cand), sg.text(path.nodes[k + 1])))
    return steps


#: How hypothesis answers are ranked (module docstring).
ANSWER_SCORES = ("sum", "geometric", "pattern")


def path_pattern(sg: ScrSubgraph, path: BeamPath) -> tuple[tuple[int, int], ...]:
    """The relation path a walk follows: (relation id, direction) of each step."""
    return tuple((int(sg.edges[e, 1]), d) for e, d in zip(path.edges, path.directions))


def rank_answers(paths: Sequence[BeamPath], answer_score: str = "sum",
                 sg: ScrSubgraph | None = None) -> list[tuple[int, float]]:
    """The hypothesis answers of ``paths`` with their scores, best first (``answer_score``: module docstring;
    ``"pattern"`` reads the walks' relations from their G_q ``sg``)."""
    if answer_score not in ANSWER_SCORES:
        raise ValueError(f"answer_score must be one of {ANSWER_SCORES}, got {answer_score!r}")
    scores: dict[int, float] = {}
    own: dict[int, float] = {}  # the best walk's geometric score (the pattern ranking's tie-break)
    keys: list[tuple[tuple[int, int], ...]] = []  # each walk's relation path (the pattern ranking)
    mass: dict[tuple[tuple[int, int], ...], float] = {}
    if answer_score == "pattern":
        if sg is None:
            raise ValueError("the pattern ranking needs the walks' G_q")
        keys = [path_pattern(sg, p) for p in paths]
        for key, p in zip(keys, paths):
            mass[key] = mass.get(key, 0.0) + p.prob
    for i, p in enumerate(paths):
        geo = math.exp(p.logp / (len(p.edges) + 1))
        if answer_score == "sum":
            scores[p.answer] = scores.get(p.answer, 0.0) + p.prob
        elif answer_score == "geometric":
            scores[p.answer] = max(scores.get(p.answer, 0.0), geo)
        else:
            s = mass[keys[i]] ** (1.0 / (len(p.edges) + 1))
            if (s, geo) > (scores.get(p.answer, 0.0), own.get(p.answer, 0.0)):
                scores[p.answer], own[p.answer] = s, geo
    return sorted(scores.items(), key=lambda kv: (-kv[1], -own.get(kv[0], 0.0), kv[0]))


def _keep(pool: list[BeamPath], k: int, min_logp: float) -> list[BeamPath]:
    pool.sort(key=lambda p: -p.logp)
    kept = [p for p in pool[:k] if p.logp >= min_logp]
    return kept or pool[:1]


def _packed_states(model: SCRModel, subgraphs: Sequence[ScrSubgraph]):  # -> (PackedGraphs, Tensor)
    """The pack and its node states h (eq. 6), reusing the states of recently searched G_q."""
    h = model.cached_node_states(subgraphs)
    if h is not None:
        return model.pack(subgraphs, node_features=False), h
    pg = model.pack(subgraphs)
    h = model.gnn(pg)
    model.keep_node_states(pg, h)
    return pg, h


@torch.inference_mode()
def beam_search(model: SCRModel, items: Sequence[tuple[str, ScrSubgraph]], beam_size: int = 10,
                min_prob: float = 0.02, max_steps: int | None = None, encode_batch: int = 256,
                answer_score: str = "sum") -> list[SearchResult]:
    """Beam search (eqs. 12–15) for each ``(question text, G_q)``; batched across the items."""
    was_training = model.training
    model.eval()
    max_steps = model.cfg.max_steps if max_steps is None else max_steps
    edge_level = model.cfg.edge_candidates
    min_logp = math.log(min_prob) if min_prob > 0 else -math.inf
    subgraphs = [sg for _, sg in items]
    pg, h = _packed_states(model, subgraphs)
    sep = model.sep
    # pools[(item, topic)] = live + finished paths of that topic entity
    pools: dict[tuple[int, int], list[BeamPath]] = {}
    for g, sg in enumerate(subgraphs):
        for t in sg.topics:
            pools[(g, t)] = [BeamPath(nodes=[t])]
    calls = [0] * len(items)
    texts_n = [0] * len(items)
    for step in range(max_steps + 1):
        live = [(key, p) for key, pool in pools.items() for p in pool if not p.finished]
        if not live:
            break
        per_path = [step_candidates(subgraphs[g], p.nodes[-1], p.nodes[0], p.edges, edge_level) for (g, _), p in live]
        # a path whose only candidate is "stay" stays with log-probability 0 whatever q_i is: not encoded
        scored = [s for s, cs in enumerate(per_path) if len(cs) > 1]
        text_row: dict[str, int] = {}
        rows = []
        for s in scored:
            (g, _), p = live[s]
            sg = subgraphs[g]
            text = question_text(items[g][0], sep, sg.text(p.nodes[0]), path_steps(model, sg, p))
            rows.append(text_row.setdefault(text, len(text_row)))
            texts_n[g] += 1
        for g in {live[s][0][0] for s in scored}:
            calls[g] += 1
        logp_of: dict[int, np.ndarray] = {s: np.zeros(1, dtype=np.float32) for s, cs in enumerate(per_path)
                                          if len(cs) == 1}
        if scored:
            texts = list(text_row)
            q = torch.cat([model.encode(texts[i:i + encode_batch]) for i in range(0, len(texts), encode_batch)])
            graph_of, cands, seg, q_rows = [], [], [], []
            for k, s in enumerate(scored):
                cs = per_path[s]
                graph_of.extend([live[s][0][0]] * len(cs))
                cands.extend(cs)
                seg.extend([k] * len(cs))
                q_rows.extend([rows[k]] * len(cs))
            vec = model.candidate_vectors(h, pg, graph_of, cands)
            seg_t = torch.tensor(seg, dtype=torch.long, device=h.device)
            q_t = torch.tensor(q_rows, dtype=torch.long, device=h.device)
            logits = F.cosine_similarity(q[q_t], vec, dim=-1) / model.cfg.tau
            flat = segment_log_softmax(logits, seg_t, len(scored)).float().cpu().numpy()
            start = 0
            for s in scored:
                logp_of[s] = flat[start:start + len(per_path[s])]
                start += len(per_path[s])
        new_pools: dict[tuple[int, int], list[BeamPath]] = {key: [p for p in pool if p.finished]
                                                           for key, pool in pools.items()}
        for s, ((key), p) in enumerate(live):
            cs = per_path[s]
            lp = logp_of[s]
            order = np.argsort(-lp, kind="stable")[:beam_size] if step < max_steps else [0]
            for j in order:
                c = cs[int(j)]
                total = p.logp + float(lp[j])
                if c.stay:
                    new_pools[key].append(BeamPath(list(p.nodes), list(p.edges), list(p.directions), total, True))
                else:
                    new_pools[key].append(BeamPath(p.nodes + [c.node], p.edges + [c.edge],
                                                   p.directions + [c.direction], total, False))
        pools = {key: _keep(pool, beam_size, min_logp) for key, pool in new_pools.items()}
    results = []
    for g in range(len(items)):
        finished = [p for (gg, _), pool in pools.items() if gg == g for p in pool if p.finished]
        kept = _keep(finished, beam_size, min_logp) if finished else []
        results.append(SearchResult(paths=kept, answers=rank_answers(kept, answer_score, subgraphs[g]),
                                    encoder_calls=calls[g],
                                    encoded_texts=texts_n[g]))
    model.train(was_training)
    return results


def shortest_walk(sg: ScrSubgraph, source: int, target: int, max_depth: int = 8,
                  bfs: tuple[dict[int, int], dict[int, list[tuple[int, int, int]]]] | None = None) -> BeamPath | None:
    """One shortest walk source → target in G_q (the reasoning path of the single-step ablation)."""
    if source == target:
        return BeamPath(nodes=[source], finished=True)
    dist, preds = bfs or _bfs(sg, source, max_depth)
    if target not in dist:
        return None
    nodes, edges, dirs = [target], [], []
    v = target
    while v != source:
        u, e, d = preds[v][0]
        nodes.append(u)
        edges.append(e)
        dirs.append(d)
        v = u
    return BeamPath(nodes=nodes[::-1], edges=edges[::-1], directions=dirs[::-1], finished=True)


@torch.inference_mode()
def single_step_search(model: SCRModel, items: Sequence[tuple[str, ScrSubgraph]], beam_size: int = 10,
                       min_prob: float = 0.02, encode_batch: int = 256) -> list[SearchResult]:
    """Ablation "w/o multi-step": P(a | q_0) = softmax over all of G_q of cos(h_{q_0}, h_a)/τ, top-K kept."""
    was_training = model.training
    model.eval()
    min_logp = math.log(min_prob) if min_prob > 0 else -math.inf
    subgraphs = [sg for _, sg in items]
    pg, h = _packed_states(model, subgraphs)
    sep = model.sep
    starts = [(g, t) for g, sg in enumerate(subgraphs) for t in sg.topics]
    texts = [question_text(items[g][0], sep, subgraphs[g].text(t)) for g, t in starts]
    results = [SearchResult(paths=[], answers=[]) for _ in items]
    if not starts:
        return results
    q = torch.cat([model.encode(texts[i:i + encode_batch]) for i in range(0, len(texts), encode_batch)])
    per_item: dict[int, list[BeamPath]] = {g: [] for g in range(len(items))}
    for s, (g, t) in enumerate(starts):
        sg = subgraphs[g]
        rows = slice(pg.offsets[g], pg.offsets[g] + sg.num_nodes)
        logits = F.cosine_similarity(q[s:s + 1], h[rows], dim=-1) / model.cfg.tau
        lp = torch.log_softmax(logits, dim=0).float().cpu().numpy()
        pool = []
        bfs = _bfs(sg, t, 8)
        for j in np.argsort(-lp, kind="stable")[: beam_size * 2]:
            walk = shortest_walk(sg, t, int(j), bfs=bfs)
            if walk is None:
                continue
            walk.logp = float(lp[j])
            pool.append(walk)
        per_item[g].extend(_keep(pool, beam_size, min_logp) if pool else [])
        results[g].encoder_calls += 1
        results[g].encoded_texts += 1
    for g, pool in per_item.items():
        kept = _keep(pool, beam_size, min_logp) if pool else []
        results[g].paths = kept
        results[g].answers = rank_answers(kept)
    model.train(was_training)
    return results
