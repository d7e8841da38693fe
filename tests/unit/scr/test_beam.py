"""Beam search (SCR eqs. 12-15) on a hand-built graph where the right path and its probability are known.

The neural parts are replaced by a scripted scorer with known similarities — node features are one-hot
vectors and the question vector is the one-hot vector of the node a fixed policy wants next (read from
the last entity written into q_i) — so every step probability is e^{1/τ} / (e^{1/τ} + #other candidates).
Everything else (candidate sets — never back to the topic entity nor over a walked edge —, stopping, probabilities,
pruning, ranking) is the real beam search.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from sgr.methods.scr.beam import BeamPath, beam_search, rank_answers, shortest_walk
from sgr.methods.scr.data import ScrSubgraph, shortest_paths
from sgr.methods.scr.method import INT8_MIN_AGREEMENT, inference_precision
from sgr.methods.scr.model import PackedGraphs, SCRConfig, SCRModel, int8_available, question_text

NAMES = ["Topic", "A", "B", "C", "D"]
POLICY = {"Topic": "A", "A": "C", "C": "C", "B": "D", "D": "D"}
TAU = 0.5


def hand_graph() -> ScrSubgraph:
    # Topic -ra-> A, Topic -rb-> B, A -rc-> C, B -rd-> D, C -re-> Topic (a cycle, to test no revisits)
    edges = np.array([[0, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0]], dtype=np.int32)
    return ScrSubgraph(node_ids=[f"id:{n}" for n in NAMES], names=list(NAMES), cvt=np.zeros(5, bool),
                    depth=np.array([0, 1, 1, 2, 2], np.int8), edges=edges, relations=["ra", "rb", "rc", "rd", "re"],
                    topics=[0])


class ScriptedScorer(nn.Module):
    """Stands in for SCRModel's GNN and encoder with known vectors (see module docstring)."""

    def __init__(self, max_steps: int = 3) -> None:
        super().__init__()
        self.cfg = SCRConfig(tau=TAU, edge_candidates=False, max_steps=max_steps)
        self.sep = "[SEP]"
        self.seen_texts: list[str] = []

    relation_label = SCRModel.relation_label

    def pack(self, subgraphs):
        offsets, n = [], 0
        for sg in subgraphs:
            offsets.append(n)
            n += sg.num_nodes
        return PackedGraphs(torch.zeros(n, 5), torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=torch.long),
                            torch.zeros(0, 5), offsets, [[] for _ in subgraphs], list(subgraphs))

    def gnn(self, pg):
        return torch.cat([torch.eye(5)[: sg.num_nodes] for sg in pg.subgraphs])

    def encode(self, texts):
        self.seen_texts.extend(texts)
        return torch.stack([torch.eye(5)[NAMES.index(POLICY[t.split(self.sep)[-1].strip()])] for t in texts])

    def candidate_vectors(self, h, pg, graph, cands):
        return h[torch.tensor([pg.offsets[g] + c.node for g, c in zip(graph, cands)])]

    def cached_node_states(self, subgraphs):
        return None

    def keep_node_states(self, pg, h):
        pass


def p(n_candidates: int) -> float:
    """Probability of the preferred candidate among n."""
    return math.exp(1 / TAU) / (math.exp(1 / TAU) + n_candidates - 1)


def q(n_candidates: int) -> float:
    """Probability of one other candidate among n."""
    return 1 / (math.exp(1 / TAU) + n_candidates - 1)


def test_best_path_and_its_probability() -> None:
    res = beam_search(ScriptedScorer(), [("which C?", hand_graph())], beam_size=10, min_prob=0.02)[0]
    best = res.paths[0]
    assert best.nodes == [0, 1, 3] and best.edges == [0, 2] and best.directions == [0, 0]
    # Topic: {stay, A, B, C} -> A; A: {stay, C} (Topic is e_0) -> C; C: {stay} only (rc walked, Topic is e_0)
    assert best.prob == pytest.approx(p(4) * p(2) * 1.0, rel=1e-5)
    probs = {tuple(x.nodes): x.prob for x in res.paths}
    assert probs[(0,)] == pytest.approx(q(4), rel=1e-5)  # staying on the topic
    assert probs[(0, 2, 4)] == pytest.approx(q(4) * p(2), rel=1e-5)
    assert probs[(0, 3)] == pytest.approx(q(4) * p(2), rel=1e-5)  # C reached directly, stays (policy C -> C)
    assert probs[(0, 1)] == pytest.approx(p(4) * q(2), rel=1e-5)
    assert all(x.prob >= 0.02 for x in res.paths)  # Topic-B-stay (0.0115) and Topic-C-A are dropped
    assert (0, 2) not in probs and (0, 3, 1) not in probs
    assert all(len(set(x.nodes)) == len(x.nodes) for x in res.paths)  # no node is reached over a second edge
    # eq. 13: C is reached by two paths, its probability is their sum
    answers = dict(res.answers)
    assert res.answers[0][0] == 3
    assert answers[3] == pytest.approx(p(4) * p(2) + q(4) * p(2), rel=1e-5)


def test_question_text_grows_as_in_equation_8() -> None:
    model = ScriptedScorer()
    beam_search(model, [("which C?", hand_graph())], beam_size=1)
    assert model.seen_texts[0] == "which C? [SEP] Topic"
    assert model.seen_texts[1] == "which C? [SEP] Topic [SEP] ra [SEP] A"
    # at C the only candidate is "stay" (rc walked, Topic is e_0): its probability is 1 whatever q_2 is, so q_2 is
    # never encoded
    assert len(model.seen_texts) == 2
    assert question_text("q", "[SEP]", "e0", [("r1", "e1")]) == "q [SEP] e0 [SEP] r1 [SEP] e1"


def test_geometric_answer_score_does_not_favour_walks_that_stop_early() -> None:
    # answer 7 by one short walk (one move, then stay: 0.5 · 0.6 = 0.3); answer 9 by two three-move walks whose
    # steps are all likelier (0.8⁴ ≈ 0.41 and 0.7⁴ ≈ 0.24)
    short = BeamPath([0, 7], [0], [0], math.log(0.5 * 0.6), True)
    long_a = BeamPath([0, 1, 2, 9], [0, 1, 2], [0, 0, 0], 4 * math.log(0.8), True)
    long_b = BeamPath([0, 3, 4, 9], [3, 4, 5], [0, 0, 0], 4 * math.log(0.7), True)
    paths = [long_a, short, long_b]
    total = rank_answers(paths, "sum")  # eq. 13: 9 wins by adding its two walks
    assert [a for a, _ in total] == [9, 7] and dict(total)[9] == pytest.approx(0.8 ** 4 + 0.7 ** 4)
    geo = rank_answers(paths, "geometric")  # the best walk's mean step: 0.8 for 9, √0.3 ≈ 0.548 for 7
    assert [a for a, _ in geo] == [9, 7]
    assert dict(geo)[9] == pytest.approx(0.8) and dict(geo)[7] == pytest.approx(0.3 ** 0.5)
    # a likelier short walk (0.6 · 0.9 = 0.54) against one long walk (0.8⁴ ≈ 0.41)
    lone = [long_a, BeamPath([0, 7], [0], [0], math.log(0.6 * 0.9), True)]
    assert rank_answers(lone, "sum")[0][0] == 7  # 0.54 > 0.41: the product prefers the walk that stopped
    assert rank_answers(lone, "geometric")[0][0] == 9  # 0.8 > √0.54 ≈ 0.735
    with pytest.raises(ValueError, match="answer_score"):
        rank_answers(paths, "mean")


def test_greedy_keeps_one_path_and_k_caps_paths() -> None:
    greedy = beam_search(ScriptedScorer(), [("which C?", hand_graph())], beam_size=1)[0]
    assert [x.nodes for x in greedy.paths] == [[0, 1, 3]]
    two = beam_search(ScriptedScorer(), [("which C?", hand_graph())], beam_size=2)[0]
    assert len(two.paths) <= 2 and two.paths[0].nodes == [0, 1, 3]


def test_max_steps_forces_a_stop() -> None:
    res = beam_search(ScriptedScorer(max_steps=1), [("which C?", hand_graph())], beam_size=10, min_prob=0.0)[0]
    assert max(len(x.nodes) for x in res.paths) == 2
    probs = {tuple(x.nodes): x.prob for x in res.paths}
    assert probs[(0, 1)] == pytest.approx(p(4) * q(2), rel=1e-5)  # must stay at A after one move


def test_batched_questions_do_not_mix() -> None:
    sg = hand_graph()
    sg2 = hand_graph()
    sg2.topics = [2]  # start at B: B -> D
    res = beam_search(ScriptedScorer(), [("q1", sg), ("q2", sg2)], beam_size=10)
    assert res[0].paths[0].nodes == [0, 1, 3]
    assert res[1].paths[0].nodes == [2, 4]


def test_shortest_paths_and_walks_on_the_hand_graph() -> None:
    sg = hand_graph()
    walks = shortest_paths(sg, [4, 3])
    assert {w.nodes for w in walks} == {(0, 2, 4), (0, 3)}  # C is one step away over the reversed edge re
    rev = next(w for w in walks if w.nodes == (0, 3))
    assert rev.edges == (4,) and rev.directions == (1,)
    walk = shortest_walk(sg, 0, 4)
    assert walk is not None and walk.nodes == [0, 2, 4]


def test_gold_walks_follow_the_gold_relation_path_where_shortest_walks_do_not() -> None:
    from sgr.methods.scr.data import gold_walks

    # answers {A, C}: the shortest walk to A is one step, but the gold path (ra, rc) reaches C in two
    sg = hand_graph()
    walks = gold_walks(sg, [["ra", "rc"]], answers=[1, 3])
    assert [(w.nodes, w.edges) for w in walks] == [((0, 1, 3), (0, 2))]
    assert walks[0].directions == (0, 0)
    # a direction that contradicts the stored edge rules the walk out; a relation G_q lacks yields nothing
    assert gold_walks(sg, [["ra", "rc"]], answers=[3], directions=[["out", "in"]]) == []
    assert gold_walks(sg, [["ra", "zz"]], answers=[3]) == []
    # "re" walked backwards from Topic reaches C (edge C -re-> Topic) with direction 1 (against the stored edge)
    back = gold_walks(sg, [["re"]], answers=[3])
    assert [(w.nodes, w.directions) for w in back] == [((0, 3), (1,))]
    assert shortest_paths(sg, [1, 3], max_depth=3)[0].nodes == (0, 1)


def test_node_states_are_reused_and_low_precision_inference_keeps_the_ranking() -> None:
    """The real model: a G_q searched again reuses its GNN states (same result); bfloat16 and int8 encoder calls
    give the same paths as float32 and nearly the same vectors; training runs the float encoder again."""
    torch.manual_seed(0)
    model = SCRModel(SCRConfig(layers=1, max_steps=2, trainable_layers=0))
    model.eval()
    sg = hand_graph()
    items = [("which C?", sg), ("which D?", hand_graph())]
    first = beam_search(model, items, beam_size=10, min_prob=0.0)
    assert sg.digest() in model._node_states and len(model._node_states) == 1  # equal content, one entry
    again = beam_search(model, items, beam_size=10, min_prob=0.0)
    assert [[x.nodes for x in r.paths] for r in again] == [[x.nodes for x in r.paths] for r in first]
    texts = [f"which C? [SEP] Topic [SEP] ra [SEP] {n}" for n in NAMES]
    with torch.inference_mode():
        full = model.encode(texts)
        model.inference_precision = "bf16"
        assert torch.equal(model.encode(texts[:3]), full[:3])  # below BF16_MIN_TEXTS: float32
        bf = model.encode(texts)
        model.inference_precision = "int8"
        q8 = model.encode(texts)
    assert not torch.equal(bf, full) and not torch.equal(q8, full)
    assert float(torch.nn.functional.cosine_similarity(bf, full).min()) > 0.999
    assert float(torch.nn.functional.cosine_similarity(q8, full).min()) > 0.95  # measured 0.96
    assert "DynamicQuantizedLinear" in repr(model._int8["encoder"]) and "_int8" not in repr(model)
    assert not any("_int8" in k for k in model.state_dict())  # checkpoints hold the float weights only
    model.load_state_dict(model.state_dict())
    assert not model._int8  # new weights: the copy is made again
    model.inference_precision = "bf16"
    half = beam_search(model, items, beam_size=10, min_prob=0.0)
    assert [[x.nodes for x in r.paths] for r in half] == [[x.nodes for x in r.paths] for r in first]
    model.inference_precision = "int8"  # the same walks and the same best one; near ties may swap
    q8_paths = beam_search(model, items, beam_size=10, min_prob=0.0)
    assert [sorted(x.nodes for x in r.paths) for r in q8_paths] == [sorted(x.nodes for x in r.paths) for r in first]
    assert [r.paths[0].nodes for r in q8_paths] == [r.paths[0].nodes for r in first]
    model.train()
    assert model.cached_node_states([sg]) is None and not model._node_states  # training clears the cache
    model.encoder.eval()  # no dropout, to compare: training runs the float encoder
    assert torch.equal(model.encode(texts[:2]).detach(), full[:2]) and not model._int8


@pytest.mark.skipif(not int8_available(), reason="no x86 quantised engine in this PyTorch")
def test_auto_precision_runs_int8_only_for_a_model_whose_int8_vectors_agree_with_float32() -> None:
    """MiniLM keeps its question vectors in int8 (``auto`` picks it); MPNet's int8 vectors are unrelated to its
    float ones (PyTorch's dynamic quantisation breaks MPNetModel), so ``auto`` keeps it out of int8."""
    cpu = torch.device("cpu")
    minilm = SCRModel(SCRConfig(encoder="minilm", layers=1))
    assert minilm.int8_agreement() >= INT8_MIN_AGREEMENT
    assert inference_precision("auto", cpu, minilm) == "int8" and minilm.inference_precision == "fp32"
    mpnet = SCRModel(SCRConfig(encoder="mpnet", layers=1))
    assert mpnet.int8_agreement() < INT8_MIN_AGREEMENT  # measured 0.66 untrained, about 0 for the trained ones
    assert inference_precision("auto", cpu, mpnet) in ("bf16", "fp32")
    assert inference_precision("int8", cpu, mpnet) == "int8"  # asked for by name: as asked
    mpnet.load_state_dict(mpnet.state_dict())
    assert mpnet._int8_agreement is None  # new weights: measured again


def test_a_walk_may_reach_an_entity_again_over_another_edge() -> None:
    """MetaQA: "who directed the films written by the writer of Chasing Amy" is Kevin Smith, who wrote them — the
    walk film -written_by-> W <-written_by- F -directed_by-> W ends where it passed; the topic entity and a walked
    edge stay out of every candidate set."""
    from sgr.methods.scr.data import gold_walks

    names = ["Topic", "W", "F", "X", "Y"]
    edges = np.array([[0, 0, 1], [2, 0, 1], [2, 1, 1], [3, 0, 1], [4, 1, 0]], dtype=np.int32)
    sg = ScrSubgraph(node_ids=[f"id:{n}" for n in names], names=names, cvt=np.zeros(5, bool),
                     depth=np.array([0, 1, 2, 2, 1], np.int8), edges=edges, relations=["written_by", "directed_by"],
                     topics=[0])
    want = ["W", "F", "W"]  # the next entity after 1, 2, 3 entities in q_i; then stay

    class Walker(ScriptedScorer):
        def encode(self, texts):
            ents = [[x.strip() for x in t.split(self.sep)][1::2] for t in texts]
            return torch.stack([torch.eye(5)[names.index(want[len(e) - 1] if len(e) <= len(want) else e[-1])]
                                for e in ents])

    res = beam_search(Walker(), [("who directed the films written by the writer of Topic?", sg)], beam_size=10,
                      min_prob=0.0)[0]
    best = res.paths[0]
    assert best.nodes == [0, 1, 2, 1] and best.edges == [0, 1, 2] and best.directions == [0, 1, 0]
    assert res.answers[0][0] == 1
    for path in res.paths:
        assert 0 not in path.nodes[1:] and len(set(path.edges)) == len(path.edges)
    walks = gold_walks(sg, [["written_by", "written_by", "directed_by"]], answers=[1])
    assert [(w.nodes, w.edges) for w in walks] == [((0, 1, 2, 1), (0, 1, 2))]


def test_pattern_answer_score_pools_the_walks_of_one_relation_path() -> None:
    # Topic -r0-> A (one walk, then stay: 0.45); Topic -r1-> B1 -r2-> C1 (0.25) and Topic -r1-> B2 -r2-> C2 (0.20):
    # each two-step walk is less likely than the stop at A, together they are as likely
    names = ["Topic", "A", "B1", "B2", "C1", "C2"]
    edges = np.array([[0, 0, 1], [0, 1, 2], [0, 1, 3], [2, 2, 4], [3, 2, 5]], dtype=np.int32)
    sg = ScrSubgraph(node_ids=names, names=names, cvt=np.zeros(6, bool), depth=np.array([0, 1, 1, 1, 2, 2], np.int8),
                     edges=edges, relations=["r0", "r1", "r2"], topics=[0])
    paths = [BeamPath([0, 1], [0], [0], math.log(0.45), True),
             BeamPath([0, 2, 4], [1, 3], [0, 0], math.log(0.25), True),
             BeamPath([0, 3, 5], [2, 4], [0, 0], math.log(0.20), True)]
    assert rank_answers(paths, "geometric")[0][0] == 1  # √0.45 ≈ 0.67 > 0.25^(1/3) ≈ 0.63
    ranked = rank_answers(paths, "pattern", sg)
    assert [a for a, _ in ranked] == [4, 5, 1]  # (0.25 + 0.20)^(1/3) ≈ 0.77; C1's own walk is the likelier
    assert dict(ranked)[4] == pytest.approx(0.45 ** (1 / 3)) and dict(ranked)[1] == pytest.approx(0.45 ** 0.5)
    with pytest.raises(ValueError, match="G_q"):
        rank_answers(paths, "pattern")
