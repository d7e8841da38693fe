"""The relational message-passing layer (SCR eqs. 3-5): shapes, neighbour masking, attention, relations."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from sgr.methods.scr.conv import RelationalAttentionConv


def _graph():
    torch.manual_seed(0)
    x = torch.randn(6, 16)
    # edges source -> target: node 0 hears 1, 2, 3; node 1 hears 0; node 4 hears 5; node 5 hears nobody
    edge_index = torch.tensor([[1, 2, 3, 0, 5], [0, 0, 0, 1, 4]])
    rel_emb = torch.randn(3, 16)
    edge_rel = torch.tensor([0, 1, 2, 0, 1])
    return x, edge_index, rel_emb, edge_rel


def test_output_shape_and_attention_normalised_per_target() -> None:
    conv = RelationalAttentionConv(16)
    x, ei, rel, er = _graph()
    h, alpha = conv(x, ei, rel, er, return_attention=True)
    assert h.shape == (6, 16)
    assert alpha.shape == (5,)
    assert torch.all(alpha > 0)
    assert torch.allclose(alpha[:3].sum(), torch.tensor(1.0), atol=1e-6)  # node 0's three neighbours
    assert torch.allclose(alpha[3], torch.tensor(1.0)) and torch.allclose(alpha[4], torch.tensor(1.0))


def test_matches_equations_3_to_5_by_hand() -> None:
    conv = RelationalAttentionConv(16)
    with torch.no_grad():
        conv.w_e.weight.copy_(torch.randn(16, 16) * 0.3)
    x, ei, rel, er = _graph()
    h = conv(x, ei, rel, er)
    wx = x @ conv.w_e.weight.T
    a1, a2 = conv.a_e[:16], conv.a_e[16:]
    betas = torch.stack([a1 @ wx[0] + a2 @ wx[j] + conv.a_r @ conv.w_r(rel[r]) for j, r in ((1, 0), (2, 1), (3, 2))])
    alpha = torch.softmax(F.leaky_relu(betas, 0.2), dim=0)
    expected = F.elu(wx[0] + (alpha.unsqueeze(-1) * wx[[1, 2, 3]]).sum(0))
    assert torch.allclose(h[0], expected, atol=1e-5)


def test_isolated_node_and_masking_of_non_neighbours() -> None:
    conv = RelationalAttentionConv(16)
    x, ei, rel, er = _graph()
    h = conv(x, ei, rel, er)
    assert torch.allclose(h[5], F.elu(conv.w_e(x[5])), atol=1e-6)  # no neighbours: σ(W_E v_e)
    x2 = x.clone()
    x2[4] += 10.0  # node 4 is no neighbour of node 0
    h2 = conv(x2, ei, rel, er)
    assert torch.allclose(h[0], h2[0], atol=1e-6)
    assert torch.allclose(h[1], h2[1], atol=1e-6)  # node 1 hears node 0 only: unchanged as well
    assert not torch.allclose(h[4], h2[4])  # node 4 itself changes


def test_relation_embedding_moves_attention() -> None:
    conv = RelationalAttentionConv(16)
    x, ei, rel, er = _graph()
    _, a = conv(x, ei, rel, er, return_attention=True)
    rel2 = rel.clone()
    rel2[2] = rel2[2] + 3.0
    _, b = conv(x, ei, rel2, er, return_attention=True)
    assert not torch.allclose(a[:3], b[:3])  # edge 3->0 uses relation 2
    assert torch.allclose(a[3:], b[3:])  # single-neighbour softmax stays 1


def test_gradients_reach_every_parameter() -> None:
    conv = RelationalAttentionConv(16)
    x, ei, rel, er = _graph()
    conv(x, ei, rel, er).sum().backward()
    for name, p in conv.named_parameters():
        assert p.grad is not None and torch.any(p.grad != 0), name
