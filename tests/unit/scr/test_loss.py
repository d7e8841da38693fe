"""InfoNCE of SCR (eqs. 10-11) on a tiny hand-made case, and the segment softmax under it."""

from __future__ import annotations

import math

import torch

from sgr.methods.scr.model import info_nce, segment_log_softmax


def test_info_nce_matches_hand_computation() -> None:
    # step 0: q = (1, 0); candidates (1, 0) [positive], (0, 1), (1, 1): cosines 1, 0, 1/sqrt(2)
    # step 1: q = (0, 2); candidates (3, 0), (0, 1) [positive]: cosines 0, 1
    q = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    cands = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, 0.0], [0.0, 1.0]])
    segment = torch.tensor([0, 0, 0, 1, 1])
    positive = torch.tensor([0, 4])
    tau = 0.5
    l0 = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + math.exp(0) + math.exp(2 ** -0.5 / tau)))
    l1 = -math.log(math.exp(1 / tau) / (math.exp(0) + math.exp(1 / tau)))
    loss = info_nce(q, cands, segment, positive, tau)
    assert abs(float(loss) - (l0 + l1) / 2) < 1e-5
    assert abs(l0 - 0.5255) < 1e-3  # the number worked out on paper


def test_temperature_sharpens_and_positive_choice_matters() -> None:
    q = torch.tensor([[1.0, 0.0]])
    cands = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    seg = torch.tensor([0, 0])
    good = info_nce(q, cands, seg, torch.tensor([0]), 0.1)
    bad = info_nce(q, cands, seg, torch.tensor([1]), 0.1)
    soft = info_nce(q, cands, seg, torch.tensor([0]), 1.0)
    assert float(good) < float(soft) < float(bad)
    assert float(good) < 1e-3


def test_gradient_pulls_question_towards_positive() -> None:
    q = torch.tensor([[1.0, 1.0]], requires_grad=True)
    cands = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    loss = info_nce(q, cands, torch.tensor([0, 0]), torch.tensor([0]), 0.2)
    loss.backward()
    with torch.no_grad():
        moved = q - 0.1 * q.grad
    assert float(info_nce(moved, cands, torch.tensor([0, 0]), torch.tensor([0]), 0.2)) < float(loss)


def test_segment_log_softmax_normalises_each_segment() -> None:
    logits = torch.tensor([3.0, 1.0, -2.0, 100.0, 101.0])
    seg = torch.tensor([0, 0, 0, 1, 1])
    lp = segment_log_softmax(logits, seg, 2)
    assert torch.allclose(lp[:3].exp().sum(), torch.tensor(1.0))
    assert torch.allclose(lp[3:].exp().sum(), torch.tensor(1.0))
    assert torch.allclose(lp[:3], torch.log_softmax(logits[:3], 0))
