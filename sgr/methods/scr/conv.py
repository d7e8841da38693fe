"""SCR's relational message-passing layer (Lin et al., AAAI 2026, "Relational Message Passing", eqs. 3–5)."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# PyG's import scripts a helper with torch.jit, which torch 2.9+ reports as deprecated on every `sgr` run
warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=FutureWarning)
from torch_geometric.nn import MessagePassing  # noqa: E402
from torch_geometric.utils import softmax  # noqa: E402


class RelationalAttentionConv(MessagePassing):
    r"""GAT-style attention whose coefficients also read the text embedding of the connecting relation.

    For an entity e with neighbours 𝒩_e, each neighbour e' reached over relation r:

    * eq. (3): β_ee' = a_Eᵀ [W_E v_e ‖ W_E v_e'] + a_Rᵀ (W_R v_r)
    * eq. (4): α_ee' = softmax over n ∈ 𝒩_e of LeakyReLU(β_en)
    * eq. (5): v̂_e = σ(W_E v_e + Σ_{n ∈ 𝒩_e} α_en W_E v_n)

    with W_E, W_R ∈ ℝ^{d×d}, a_E ∈ ℝ^{2d}, a_R ∈ ℝ^d and σ = ELU (the paper leaves σ open; GAT's
    choice). The residual term W_E v_e is part of eq. (5). Edges are directed source → target
    (``edge_index[0]`` = e', ``edge_index[1]`` = e); SCR's caller adds each stored triple in both
    directions, the reverse one with the embedding of the reversed relation. An entity without
    neighbours gets v̂_e = σ(W_E v_e).

    Since a_Eᵀ[x ‖ y] = a_E[:d]·x + a_E[d:]·y, the score is computed from per-node and per-relation
    scalars (no per-edge d-vectors), so the layer costs O(N·d² + R·d² + E·d).

    ``W_E`` is initialised to the identity so that an untrained layer keeps entity features in the text
    encoder's space (the question encoder starts from the same weights); W_R, a_E, a_R as in GAT
    (Glorot).
    """

    def __init__(self, dim: int, negative_slope: float = 0.2, dropout: float = 0.0) -> None:
        super().__init__(aggr="add", node_dim=0)
        self.dim = dim
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.w_e = nn.Linear(dim, dim, bias=False)
        self.w_r = nn.Linear(dim, dim, bias=False)
        self.a_e = nn.Parameter(torch.empty(2 * dim))
        self.a_r = nn.Parameter(torch.empty(dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        super().reset_parameters()
        with torch.no_grad():
            self.w_e.weight.copy_(torch.eye(self.dim))
        nn.init.xavier_uniform_(self.w_r.weight)
        bound = (6.0 / (2 * self.dim + 1)) ** 0.5
        nn.init.uniform_(self.a_e, -bound, bound)
        nn.init.uniform_(self.a_r, -bound, bound)

    def forward(self, x: Tensor, edge_index: Tensor, rel_emb: Tensor, edge_rel: Tensor,
                return_attention: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """``x`` (N, d) entity features, ``edge_index`` (2, E), ``rel_emb`` (R, d) relation embeddings v_r,
        ``edge_rel`` (E,) the relation index of each edge. Returns v̂ (N, d) [and α (E,)]."""
        wx = self.w_e(x)  # W_E v
        d = self.dim
        s_dst = wx @ self.a_e[:d]  # a_E[:d]ᵀ W_E v_e   (e = target)
        s_src = wx @ self.a_e[d:]  # a_E[d:]ᵀ W_E v_e'  (e' = source / neighbour)
        s_rel = self.w_r(rel_emb) @ self.a_r  # a_Rᵀ W_R v_r, one scalar per relation
        out, alpha = self.propagate(edge_index, wx=wx, s_src=s_src, s_dst=s_dst,
                                    s_edge=s_rel[edge_rel], size=(x.size(0), x.size(0)))
        h = F.elu(wx + out)
        return (h, alpha) if return_attention else h

    def propagate(self, edge_index: Tensor, size: tuple[int, int], **kwargs: Tensor) -> tuple[Tensor, Tensor]:  # type: ignore[override]
        self._alpha: Tensor | None = None
        out = super().propagate(edge_index, size=size, **kwargs)
        alpha = self._alpha
        self._alpha = None
        assert alpha is not None
        return out, alpha

    def message(self, wx_j: Tensor, s_src_j: Tensor, s_dst_i: Tensor, s_edge: Tensor,  # type: ignore[override]
                index: Tensor, ptr: Tensor | None, size_i: int | None) -> Tensor:
        beta = s_dst_i + s_src_j + s_edge  # eq. (3)
        alpha = softmax(F.leaky_relu(beta, self.negative_slope), index, ptr, size_i)  # eq. (4)
        self._alpha = alpha
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return alpha.unsqueeze(-1) * wx_j  # α_en W_E v_n, summed by aggr="add" (eq. 5)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.dim})"
