"""The SCR model: relational GNN over G_q + a trainable question encoder, scored by cosine similarity.

Lin et al., AAAI 2026, "Stepwise Contrastive Reasoning":

* entity/relation texts are encoded once by a *frozen* encoder, v_x = Enc(x) (eq. 2) — here
  :func:`sgr.llm.encoders.embed_texts` (mean-pooled, cached on disk), kept in an in-process table;
* an L = 3 layer GNN of :class:`~sgr.methods.scr.conv.RelationalAttentionConv` gives h_q = GNN(G_q, v_E, v_R)
  (eq. 6); every stored triple is a message in both directions, the reverse one with the embedding of
  the relation's text plus ``" (reverse)"``;
* the question encoder shares the frozen encoder's initial weights but is trained ("Encoding the
  Question"); its input is q_0 = [CLS] q [SEP] e_0 [SEP] (eq. 1), after each step
  q_{i+1} = q_i r_{i+1} [SEP] e_{i+1} [SEP] (eq. 8); h_q is the mean of its token states (the pooling
  all-MiniLM/all-mpnet were trained with; BERT's [CLS] pooling is ``pooling="cls"``);
* a step scores each candidate e ∈ {e_i} ∪ 𝒩(e_i) by CosineSimilarity(h_{q_i}, h_e) (eq. 7), and
  P(e | q_i, e_i) = softmax over the candidates of cos/τ — the distribution whose negative log is the
  InfoNCE loss (eqs. 10–11) and whose product is the path probability of beam search (eq. 14).

**One documented addition** (``edge_candidates=True``, the default): a candidate is an *edge*
(e_i, r, e) rather than an entity, and its vector is h_e + W_C v_r (v_r the frozen text embedding of r
in the walked direction; the "stay" candidate uses a learned vector instead of W_C v_r). Eq. (5)'s
messages carry no relation content (r only weights the attention), so the director and an actor of
the same film — whose own names say nothing about their role — get near-identical h_e and eq. (7)
cannot tell "who directed X" from "who starred in X" (MetaQA). W_C starts at zero, so an untrained
model scores exactly as eq. (7). ``edge_candidates=False`` is the paper's entity-level scoring.

**One documented relaxation** (:func:`step_candidates`): a walk never returns to its topic entity and never walks
an edge twice, but it may reach an entity it passed through over another edge. The paper prevents revisiting any
node; MetaQA's answer sets hold such entities — "who directed the films written by the writer of Chasing Amy" is
Kevin Smith, who wrote them (written_by, written_by⁻¹, directed_by). With every visited node excluded the search
could not reach them and the training walks to them fell back to the one-step shortest walk, which taught the
model to stop early. Measured on 300 MetaQA 3-hop test questions with one checkpoint (trained under the old rule):
Hits@1 0.897 → 0.930 from the search alone, 1-hop and 2-hop unchanged.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from sgr.core.checkpoints import load_checkpoint, require_keys
from sgr.core.errors import ConfigError
from sgr.methods.scr.conv import RelationalAttentionConv
from sgr.methods.scr.data import ScrSubgraph, SubgraphConfig, relation_texts


#: Smallest encoder call that runs under bfloat16 when :attr:`SCRModel.inference_precision` is ``"bf16"``.
BF16_MIN_TEXTS = 4

#: The question encoder's number formats at CPU inference (:attr:`SCRModel.inference_precision`).
INFERENCE_PRECISIONS = ("fp32", "bf16", "int8")


def int8_encoder(encoder: nn.Module) -> nn.Module:
    """A copy of ``encoder`` whose linear layers run in int8: weights quantised per output channel, activations
    per call (PyTorch dynamic quantisation, the usual CPU recipe for BERT-sized encoders).

    ``torch.ao.quantization.quantize_dynamic`` is deprecated in recent PyTorch (it warns; torchao targets GPUs);
    its warnings are silenced here and :func:`int8_available` says whether this build still has it."""
    import warnings

    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quantize_dynamic(encoder, {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8, inplace=False)


#: Question states the int8 check encodes (:meth:`SCRModel.int8_agreement`): (question, topic, walked steps).
INT8_PROBES = (("what movies did Tom Hanks act in", "Tom Hanks", ()),
               ("who directed the films written by Woody Allen", "Woody Allen",
                (("written_by (reverse)", "Annie Hall"),)),
               ("what genres are the movies that share actors with Top Gun", "Top Gun",
                (("starred_actors", "Tom Cruise"), ("starred_actors (reverse)", "Cocktail"))),
               ("where was barack obama born", "Barack Obama", ()),
               ("what currency is used in japan", "Japan", (("location.country.currency_used", "Japanese yen"),)))


def int8_available() -> bool:
    """Whether this PyTorch can run :func:`int8_encoder` on this CPU (an x86 or fbgemm quantised engine)."""
    try:
        from torch.ao.quantization import quantize_dynamic  # noqa: F401
    except ImportError:
        return False
    return bool({"x86", "fbgemm"} & set(torch.backends.quantized.supported_engines))


@dataclass
class SCRConfig:
    """Model and inference settings (saved in every checkpoint)."""

    encoder: str = "minilm"  # a name known to sgr.llm.encoders (minilm: 384-d BertModel; mpnet: 768-d)
    layers: int = 3  # L message-passing layers (paper: 3)
    tau: float = 0.05  # InfoNCE temperature τ (eq. 11)
    max_length: int = 128  # question-encoder tokens
    pooling: str = "mean"  # "mean" or "cls"
    edge_candidates: bool = True  # candidates are edges (see module docstring); False = eq. 7 as printed
    single_step: bool = False  # ablation "w/o multi-step": q_0 aligned with the answer among all of G_q
    dropout: float = 0.1  # attention dropout in the GNN
    max_steps: int = 3  # longest walk beam search may take (then it must stay)
    trainable_layers: int | None = None  # None: the whole question encoder trains (paper); k: only the top k
    subgraph: SubgraphConfig = field(default_factory=SubgraphConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SCRConfig":
        data = dict(data)
        data["subgraph"] = SubgraphConfig(**data.get("subgraph", {}))
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


class TextTable:
    """Frozen text embeddings v_x (eq. 2): :func:`sgr.llm.encoders.embed_texts` with an in-process memo."""

    def __init__(self, encoder: str) -> None:
        self.encoder = encoder
        self._memo: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            from sgr.llm.encoders import embed_texts

            vecs = embed_texts(missing, self.encoder, batch_size=128)
            self._memo.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])

    def __len__(self) -> int:
        return len(self._memo)


@dataclass
class PackedGraphs:
    """Several G_q as one disjoint graph: node features, both-direction edges and relation embeddings.

    Node ``i`` of graph ``g`` is row ``offsets[g] + i``. ``rel_rows[g][k]`` is the (forward, reverse) row
    of graph g's relation k in ``rel_emb``.
    """

    x: Tensor
    edge_index: Tensor
    edge_rel: Tensor
    rel_emb: Tensor
    offsets: list[int]
    rel_rows: list[list[tuple[int, int]]]
    subgraphs: list[ScrSubgraph]


@dataclass(frozen=True)
class StepCandidate:
    """A next-step choice from node ``src``: stay (``edge == -1``) or walk ``edge`` in ``direction`` to ``node``."""

    node: int
    edge: int
    direction: int

    @property
    def stay(self) -> bool:
        return self.edge < 0


def step_candidates(sg: ScrSubgraph, current: int, topic: int, walked: Sequence[int] = (),
                    edge_level: bool = True) -> list[StepCandidate]:
    """M_{e_i} = {e_i} ∪ 𝒩(e_i) minus the topic entity and the edges ``walked`` so far (eq. 10; the paper's "To
    prevent revisiting nodes" relaxed, module docstring).

    The first candidate is always "stay". With ``edge_level`` each connecting edge is a candidate; else
    one candidate per neighbour entity (its first edge not walked gives the relation written into q_{i+1}).
    """
    out = [StepCandidate(current, -1, -1)]
    used = set(walked)
    seen: set[int] = set()
    for v, e, d in sg.neighbours(current):
        if v == topic or v == current or e in used:
            continue
        if not edge_level:
            if v in seen:
                continue
            seen.add(v)
        out.append(StepCandidate(v, e, d))
    return out


def segment_log_softmax(logits: Tensor, segment: Tensor, num_segments: int) -> Tensor:
    """log softmax of ``logits`` within each segment (the candidate set of one step)."""
    mx = torch.full((num_segments,), -math.inf, dtype=logits.dtype, device=logits.device)
    mx = mx.scatter_reduce(0, segment, logits.detach(), reduce="amax", include_self=True)
    shifted = logits - mx[segment]
    total = torch.zeros(num_segments, dtype=logits.dtype, device=logits.device).index_add(0, segment, shifted.exp())
    return shifted - total.log()[segment]


def info_nce(q: Tensor, cands: Tensor, segment: Tensor, positive: Tensor, tau: float) -> Tensor:
    """Eqs. (10)–(11): mean over steps of −log φ(h_q, h_pos) / Σ_{n ∈ M} φ(h_q, h_n), φ = exp(cos/τ).

    ``q`` (S, d) question vectors, ``cands`` (C, d) candidate vectors, ``segment`` (C,) the step of each
    candidate, ``positive`` (S,) the index (into ``cands``) of each step's positive.
    """
    logits = F.cosine_similarity(q[segment], cands, dim=-1) / tau
    logp = segment_log_softmax(logits, segment, q.size(0))
    return -logp[positive].mean()


def question_text(question: str, sep: str, topic: str, steps: Sequence[tuple[str, str]] = ()) -> str:
    """q_i without the outer [CLS]/[SEP] the tokenizer adds: ``q [SEP] e_0 [SEP] r_1 [SEP] e_1 …`` (eqs. 1, 8)."""
    text = f"{question} {sep} {topic}"
    for rel, ent in steps:
        text += f" {sep} {rel} {sep} {ent}"
    return text


class SCRModel(nn.Module):
    """GNN + trainable question encoder; the encoder (a name in :mod:`sgr.encoders`) is a constructor argument."""

    def __init__(self, cfg: SCRConfig | None = None, encoder: str | None = None) -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        from sgr.llm.encoders import encoder_path

        self.cfg = cfg or SCRConfig()
        if encoder is not None:
            self.cfg.encoder = encoder
        if self.cfg.pooling not in ("mean", "cls"):
            raise ConfigError(f"SCR pooling must be 'mean' or 'cls', got {self.cfg.pooling!r}")
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        path = str(encoder_path(self.cfg.encoder))
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.encoder = AutoModel.from_pretrained(path)
        self.dim = int(self.encoder.config.hidden_size)
        self.convs = nn.ModuleList(RelationalAttentionConv(self.dim, dropout=self.cfg.dropout)
                                   for _ in range(self.cfg.layers))
        self.w_c = nn.Linear(self.dim, self.dim, bias=False)  # edge candidates: h_e + W_C v_r
        nn.init.zeros_(self.w_c.weight)
        self.stop = nn.Parameter(torch.zeros(self.dim))  # the "stay" candidate's relation term
        self.texts = TextTable(self.cfg.encoder)
        #: Inference on a CPU only (:data:`INFERENCE_PRECISIONS`): ``"bf16"`` runs the question encoder under
        #: bfloat16 autocast for calls of at least :data:`BF16_MIN_TEXTS` texts (measured here, MiniLM, 1 thread:
        #: 10 texts 1.5× less CPU time, 1 text slightly more; pooled vectors within cosine 0.99998 of float32);
        #: ``"int8"`` runs an :func:`int8_encoder` copy of it, made on first use and dropped when the model trains.
        self.inference_precision = "fp32"
        self._int8: dict[str, nn.Module] = {}  # a plain dict: the copy is no submodule (not saved, not trained)
        self._int8_agreement: float | None = None
        self._node_states: OrderedDict[str, Tensor] = OrderedDict()
        self._freeze_lower_layers()

    # -- setup ---------------------------------------------------------------------------------
    def _freeze_lower_layers(self) -> None:
        k = self.cfg.trainable_layers
        if k is None:
            return
        layers = self.encoder.encoder.layer
        for p in self.encoder.embeddings.parameters():
            p.requires_grad_(False)
        for layer in layers[: max(0, len(layers) - k)]:
            for p in layer.parameters():
                p.requires_grad_(False)

    def load_state_dict(self, *args: Any, **kwargs: Any) -> Any:
        """As :meth:`torch.nn.Module.load_state_dict`; an int8 copy of the old weights is dropped."""
        self._int8.clear()
        self._int8_agreement = None
        return super().load_state_dict(*args, **kwargs)

    @property
    def sep(self) -> str:
        return str(self.tokenizer.sep_token)

    @property
    def device(self) -> torch.device:
        return self.stop.device

    # -- graphs --------------------------------------------------------------------------------
    def pack(self, subgraphs: Sequence[ScrSubgraph], node_features: bool = True) -> PackedGraphs:
        """Disjoint union of ``subgraphs`` with frozen text features (eq. 2) for nodes and relations
        (``node_features=False``: ``x`` left empty, for graphs whose node states are already known)."""
        node_texts: list[str] = []
        rel_row: dict[str, int] = {}
        rel_rows: list[list[tuple[int, int]]] = []
        offsets: list[int] = []
        src: list[np.ndarray] = []
        dst: list[np.ndarray] = []
        rels: list[np.ndarray] = []
        n = 0
        for sg in subgraphs:
            offsets.append(n)
            if node_features:
                node_texts.extend(sg.text(i) for i in range(sg.num_nodes))
            rows = []
            for name in sg.relations:
                fwd, rev = relation_texts(name)
                rows.append((rel_row.setdefault(fwd, len(rel_row)), rel_row.setdefault(rev, len(rel_row))))
            rel_rows.append(rows)
            if sg.num_edges:
                h, r, t = sg.edges[:, 0] + n, sg.edges[:, 1], sg.edges[:, 2] + n
                fwd_rows = np.array([rows[k][0] for k in range(len(rows))], dtype=np.int64)
                rev_rows = np.array([rows[k][1] for k in range(len(rows))], dtype=np.int64)
                # message tail -> head carries r walked backwards from the head's view, and vice versa
                src.extend([t, h])
                dst.extend([h, t])
                rels.extend([fwd_rows[r], rev_rows[r]])
            n += sg.num_nodes
        dev = self.device
        x = torch.from_numpy(self.texts(node_texts)).to(dev) if node_texts else torch.zeros(0, self.dim, device=dev)
        rel_list = sorted(rel_row, key=rel_row.get)
        rel_emb = (torch.from_numpy(self.texts(rel_list)).to(dev) if rel_list
                   else torch.zeros(0, self.dim, device=dev))
        if src:
            edge_index = torch.from_numpy(np.stack([np.concatenate(src), np.concatenate(dst)])).long().to(dev)
            edge_rel = torch.from_numpy(np.concatenate(rels)).long().to(dev)
        else:
            edge_index = torch.zeros(2, 0, dtype=torch.long, device=dev)
            edge_rel = torch.zeros(0, dtype=torch.long, device=dev)
        return PackedGraphs(x, edge_index, edge_rel, rel_emb, offsets, rel_rows, list(subgraphs))

    def gnn(self, pg: PackedGraphs) -> Tensor:
        """h = GNN(G_q, v_E, v_R) (eq. 6): L stacked relational attention layers."""
        h = pg.x
        if pg.rel_emb.numel() == 0:  # no edges at all: layers still apply W_E and σ
            rel_emb = torch.zeros(1, self.dim, device=h.device)
        else:
            rel_emb = pg.rel_emb
        for conv in self.convs:
            h = conv(h, pg.edge_index, rel_emb, pg.edge_rel)
        return h

    # -- questions -----------------------------------------------------------------------------
    def int8_agreement(self) -> float:
        """The lowest cosine between the question vectors of :data:`INT8_PROBES` in int8 and in float32 (computed
        once per model; the weights do not change at inference). Measured: the MiniLM checkpoints 0.97–0.98
        (their test Hits@1 equal in int8), the MPNet ones about 0 — PyTorch's dynamic quantisation breaks
        MPNetModel's encoder outright, so :func:`sgr.methods.scr.method.inference_precision` reads this before
        choosing int8."""
        if self._int8_agreement is None:
            texts = [question_text(q, self.sep, topic, steps) for q, topic, steps in INT8_PROBES]
            was, training = self.inference_precision, self.training
            self.eval()
            try:
                with torch.inference_mode():
                    self.inference_precision = "fp32"
                    ref = self.encode(texts)
                    self.inference_precision = "int8"
                    low = self.encode(texts)
            finally:
                self.inference_precision = was
                self.train(training)
            self._int8_agreement = float(F.cosine_similarity(ref, low, dim=-1).min())
        return self._int8_agreement

    def encode(self, texts: Sequence[str]) -> Tensor:
        """h_{q_i} for each q_i text (mean of the last token states, or [CLS]); float32.

        In eval mode on a CPU, the encoder runs in :attr:`inference_precision`."""
        batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.cfg.max_length,
                               return_tensors="pt").to(self.device)
        encoder = self.encoder
        precision = "fp32" if self.training or self.device.type != "cpu" else self.inference_precision
        if self.training:
            self._int8.clear()  # the weights are about to change
            self._int8_agreement = None
        elif precision == "int8":
            if "encoder" not in self._int8:
                self._int8["encoder"] = int8_encoder(self.encoder)
            encoder = self._int8["encoder"]
        use_bf16 = precision == "bf16" and len(texts) >= BF16_MIN_TEXTS
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
            states = encoder(**batch).last_hidden_state
        states = states.float()
        if self.cfg.pooling == "cls":
            return states[:, 0]
        mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
        return (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def cached_node_states(self, subgraphs: Sequence[ScrSubgraph]) -> Tensor | None:
        """In inference, h of every node of ``subgraphs`` (eq. 6) when each G_q's states were kept, else None.

        The GNN never passes messages between the disjoint graphs of a pack, so graph g's rows of
        ``gnn(pack([… g …]))`` equal ``gnn(pack([g]))``: states are kept per G_q content digest
        (:meth:`ScrSubgraph.digest`) by :meth:`keep_node_states`, in an LRU cleared whenever the model trains."""
        if self.training or not subgraphs:
            self._node_states.clear()
            return None
        keys = [sg.digest() for sg in subgraphs]
        if not all(k in self._node_states for k in keys):
            return None
        for k in keys:
            self._node_states.move_to_end(k)
        return torch.cat([self._node_states[k] for k in keys])

    def keep_node_states(self, pg: PackedGraphs, h: Tensor, cache_size: int = 64) -> None:
        """Remember each packed G_q's node states (inference only; the ``cache_size`` most recent graphs)."""
        if self.training:
            return
        for g, sg in enumerate(pg.subgraphs):
            key = sg.digest()
            self._node_states[key] = h[pg.offsets[g]:pg.offsets[g] + sg.num_nodes]
            self._node_states.move_to_end(key)
        while len(self._node_states) > cache_size:
            self._node_states.popitem(last=False)

    # -- candidates ----------------------------------------------------------------------------
    def candidate_vectors(self, h: Tensor, pg: PackedGraphs, graph: Sequence[int],
                          cands: Sequence[StepCandidate]) -> Tensor:
        """Vectors of candidates (``graph[k]``, ``cands[k]``): h_e, plus W_C v_r / the stay vector when edge-level."""
        rows = torch.tensor([pg.offsets[g] + c.node for g, c in zip(graph, cands)], dtype=torch.long,
                            device=h.device)
        vec = h[rows]
        if not self.cfg.edge_candidates or self.cfg.single_step:
            return vec
        rel_idx = []
        stay = []
        for g, c in zip(graph, cands):
            if c.stay:
                rel_idx.append(0)
                stay.append(True)
            else:
                sg = pg.subgraphs[g]
                k = int(sg.edges[c.edge, 1])
                fwd, rev = pg.rel_rows[g][k]
                rel_idx.append(fwd if c.direction == 0 else rev)
                stay.append(False)
        stay_t = torch.tensor(stay, dtype=torch.bool, device=h.device).unsqueeze(-1)
        if pg.rel_emb.numel():
            rel_vec = self.w_c(pg.rel_emb[torch.tensor(rel_idx, dtype=torch.long, device=h.device)])
        else:
            rel_vec = torch.zeros_like(vec)
        return vec + torch.where(stay_t, self.stop.expand_as(vec), rel_vec)

    def relation_label(self, sg: ScrSubgraph, cand: StepCandidate) -> str:
        """Text of the relation r_{i+1} written into q_{i+1} (eq. 8)."""
        fwd, rev = relation_texts(sg.relations[int(sg.edges[cand.edge, 1])])
        return fwd if cand.direction == 0 else rev

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: Path, extra: dict[str, Any] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        torch.save({"config": self.cfg.to_dict(), "state_dict": self.state_dict(), **(extra or {})}, tmp)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, device: str | torch.device = "cpu") -> tuple["SCRModel", dict[str, Any]]:
        if not Path(path).exists():
            raise ConfigError(f"{path}: no SCR checkpoint there (train one with `sgr scr train`)")
        blob = require_keys(load_checkpoint(path, what="SCR checkpoint"), ("config", "state_dict"), source=path,
                            what="SCR checkpoint")
        try:
            model = cls(SCRConfig.from_dict(blob["config"]))
            model.load_state_dict(blob["state_dict"])
        except (TypeError, ValueError, KeyError, RuntimeError) as exc:
            raise ConfigError(f"{path}: not an SCR checkpoint of this version ({str(exc).splitlines()[0][:160]})") \
                from None
        model.to(device)
        model.eval()
        meta = {k: v for k, v in blob.items() if k not in ("state_dict",)}
        return model, meta


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` → CUDA when available, else CPU; ``cuda`` without a GPU is a ConfigError."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("--device cuda: no CUDA GPU is visible here (use --device cpu or auto)")
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise ConfigError(f"--device must be auto, cpu or cuda, got {device!r}")
    return torch.device(device)
