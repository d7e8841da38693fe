"""Training SCR: stepwise InfoNCE on shortest topic→answer walks (Lin et al., AAAI 2026, "Optimization Objective").

For a question q with G_q and a shortest walk e_0 -r_1-> e_1 … -r_l-> e_l to an answer, every step i = 0 … l
is one contrastive example: the question state q_i (eqs. 1, 8, teacher-forced along the walk), the candidate
set M_{e_i} = {e_i} ∪ 𝒩(e_i) (never e_0 nor an edge walked, as at inference) and the positive e_{i+1}
(for i = l the positive is e_l itself: "stay", the stop decision). The loss is InfoNCE (eqs. 10–11):

    L = −log φ(h_{q_i}, h_{e_{i+1}}) / Σ_{n ∈ M_{e_i}} φ(h_{q_i}, h_n),   φ = exp(cos/τ)

averaged over the steps of a batch. Each epoch draws, per question, one answer and one of its shortest
walks at random (seeded). The single-step ablation ("w/o multi-step", Table 4) instead aligns q_0 with the
answer among all entities of G_q.

Each epoch ends with a validation pass (beam search, K = ``val_beam``): Hit (some answer among the
hypothesis answers) and Hits@1 (the top answer is gold); the best epoch by (Hits@1, Hit) is saved as
``best.pt``, the last as ``last.pt``; training stops after ``patience`` epochs without improvement.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sgr.methods.scr.beam import ANSWER_SCORES, SearchResult, beam_search, rank_answers, single_step_search
from sgr.methods.scr.data import Example
from sgr.methods.scr.model import StepCandidate, SCRModel, info_nce, question_text, step_candidates


@dataclass
class ScrTrainConfig:
    epochs: int = 5
    batch_size: int = 16
    lr_encoder: float = 3e-5
    lr_graph: float = 1e-3
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    patience: int = 2
    seed: int = 0
    val_beam: int = 10
    val_batch: int = 32
    out_dir: Path | None = None
    progress: bool = True
    log_every: int = 50  # batches between plain log lines when stdout is not a terminal (0: never)
    time_budget: float = 0.0  # seconds (0: none): no epoch starts that would end past it at the last epoch's pace,
    # and an epoch still running when it is spent ends there (recorded as incomplete), is validated and is the last


@dataclass
class EpochRecord:
    epoch: int
    loss: float
    step_accuracy: float
    val_hit: float
    val_hits1: float
    train_seconds: float
    val_seconds: float
    steps: int
    complete: bool = True  # False: ended by ScrTrainConfig.time_budget before its last batch


@dataclass
class ScrTrainResult:
    history: list[EpochRecord] = field(default_factory=list)
    best_epoch: int = 0
    best_hits1: float = -1.0
    best_hit: float = -1.0
    best_path: Path | None = None
    last_path: Path | None = None
    stopped_early: bool = False
    answer_score: dict[str, Any] = field(default_factory=dict)  # the ranking chosen on validation (choose_answer_score)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["best_path"] = str(self.best_path) if self.best_path else None
        d["last_path"] = str(self.last_path) if self.last_path else None
        return d


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


@dataclass
class _Step:
    graph: int
    text: str
    cands: list[StepCandidate]
    positive: int  # index into cands
    source: int


def _steps_for(model: SCRModel, g: int, ex: Example, rng: random.Random) -> list[_Step]:
    """The teacher-forced steps of one sampled walk (eqs. 1, 8, 10)."""
    sg = ex.subgraph
    walk = rng.choice(ex.walks)
    edge_level = model.cfg.edge_candidates
    out: list[_Step] = []
    topic_text = sg.text(walk.nodes[0])
    if model.cfg.single_step:
        cands = [StepCandidate(i, -1, -1) for i in range(sg.num_nodes)]
        text = question_text(ex.question.text, model.sep, topic_text)
        return [_Step(g, text, cands, walk.nodes[-1], walk.nodes[0])]
    history: list[tuple[str, str]] = []
    for i in range(walk.length + 1):
        cur = walk.nodes[i]
        cands = step_candidates(sg, cur, walk.nodes[0], walk.edges[:i], edge_level)
        if i == walk.length:
            pos = 0  # stay: e_l is the answer
        else:
            nxt, e, d = walk.nodes[i + 1], walk.edges[i], walk.directions[i]
            pos = next((k for k, c in enumerate(cands)
                        if c.node == nxt and (not edge_level or (c.edge == e and c.direction == d))), -1)
            if pos < 0:  # entity-level: the walk's edge was collapsed into the neighbour's first edge
                pos = next(k for k, c in enumerate(cands) if c.node == nxt)
        out.append(_Step(g, question_text(ex.question.text, model.sep, topic_text, history), cands, pos, cur))
        if i < walk.length:
            chosen = cands[pos]
            history.append((model.relation_label(sg, chosen), sg.text(chosen.node)))
    return out


def batch_loss(model: SCRModel, batch: Sequence[Example], rng: random.Random) -> tuple[torch.Tensor, float, int]:
    """InfoNCE over all steps of one sampled walk per question; returns (loss, step accuracy, #steps)."""
    usable = [ex for ex in batch if ex.walks]
    pg = model.pack([ex.subgraph for ex in usable])
    h = model.gnn(pg)
    steps: list[_Step] = []
    for g, ex in enumerate(usable):
        steps.extend(_steps_for(model, g, ex, rng))
    q = model.encode([s.text for s in steps])
    graph_of, cands, seg, positive = [], [], [], []
    for k, s in enumerate(steps):
        positive.append(len(cands) + s.positive)
        graph_of.extend([s.graph] * len(s.cands))
        cands.extend(s.cands)
        seg.extend([k] * len(s.cands))
    vec = model.candidate_vectors(h, pg, graph_of, cands)
    seg_t = torch.tensor(seg, dtype=torch.long, device=h.device)
    pos_t = torch.tensor(positive, dtype=torch.long, device=h.device)
    loss = info_nce(q, vec, seg_t, pos_t, model.cfg.tau)
    with torch.no_grad():
        logits = torch.nn.functional.cosine_similarity(q[seg_t], vec, dim=-1)
        best = torch.full((len(steps),), -2.0, device=h.device).scatter_reduce(0, seg_t, logits, "amax")
        acc = float((logits[pos_t] >= best).float().mean())
    return loss, acc, len(steps)


def _search_all(model: SCRModel, examples: Sequence[Example], beam: int, batch: int,
                min_prob: float) -> list[SearchResult]:
    """Beam search (or the single-step search) over ``examples``, ``batch`` questions at a time."""
    search = single_step_search if model.cfg.single_step else beam_search
    results: list[SearchResult] = []
    for i in range(0, len(examples), batch):
        chunk = examples[i:i + batch]
        results += search(model, [(ex.question.text, ex.subgraph) for ex in chunk], beam_size=beam, min_prob=min_prob)
    return results


def _hits(examples: Sequence[Example], results: Sequence[SearchResult], answer_score: str) -> tuple[float, float]:
    """(Hit, Hits@1) by graph node, the answers of each result ranked by ``answer_score``."""
    hit = hits1 = 0
    for ex, res in zip(examples, results):
        gold = set(ex.answers)
        nodes = [a for a, _ in rank_answers(res.paths, answer_score, ex.subgraph)]
        hit += bool(gold & set(nodes))
        hits1 += bool(nodes and nodes[0] in gold)
    return hit / len(examples), hits1 / len(examples)


def evaluate_hits(model: SCRModel, examples: Sequence[Example], beam: int = 10, batch: int = 32,
                  min_prob: float = 0.02) -> tuple[float, float]:
    """(Hit, Hits@1) of beam search (or the single-step search) on ``examples``, by graph node (eq. 13's ranking)."""
    if not examples:
        return 0.0, 0.0
    return _hits(examples, _search_all(model, examples, beam, batch, min_prob), "sum")


def choose_answer_score(checkpoint: Path, val_examples: Sequence[Example], beam: int = 10, batch: int = 32,
                        min_prob: float = 0.02, device: str | torch.device = "cpu") -> dict[str, Any]:
    """Pick the answer ranking of a stepwise checkpoint on validation (the better Hits@1; eq. 13's ``sum`` on a
    tie) and record it in the checkpoint as ``answer_score``, with each ranking's validation Hits@1, so the methods
    rank as it was chosen (:class:`sgr.methods.scr.method.SCRAnswerer`). One search; the rankings order its paths'
    ends."""
    model, meta = SCRModel.load(checkpoint, device)
    if model.cfg.single_step or not val_examples:
        return {}
    results = _search_all(model, val_examples, beam, batch, min_prob)
    figures = {how: _hits(val_examples, results, how)[1] for how in ANSWER_SCORES}
    choice = {"answer_score": max(ANSWER_SCORES, key=lambda how: (figures[how], how == "sum")),
              "answer_score_val_hits1": figures}
    model.save(checkpoint, {k: v for k, v in meta.items() if k != "config"} | choice)
    return choice


def train(model: SCRModel, train_examples: Sequence[Example], val_examples: Sequence[Example],
          cfg: ScrTrainConfig, on_epoch: Callable[[EpochRecord], None] | None = None,
          extra_meta: dict[str, Any] | None = None) -> ScrTrainResult:
    """Train ``model`` in place (AdamW: ``lr_encoder`` for the question encoder, ``lr_graph`` for the GNN)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    seed_everything(cfg.seed)
    rng = random.Random(cfg.seed)
    enc_params = [p for p in model.encoder.parameters() if p.requires_grad]
    enc_ids = {id(p) for p in model.encoder.parameters()}
    other = [p for p in model.parameters() if id(p) not in enc_ids and p.requires_grad]
    opt = torch.optim.AdamW([{"params": enc_params, "lr": cfg.lr_encoder},
                             {"params": other, "lr": cfg.lr_graph}], weight_decay=cfg.weight_decay)
    usable = [ex for ex in train_examples if ex.walks]
    result = ScrTrainResult()
    meta = {"train_questions": len(usable), "val_questions": len(val_examples), **(extra_meta or {})}
    bad_epochs = 0
    started = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        if cfg.time_budget and result.history:
            last = result.history[-1]
            if time.perf_counter() - started + last.train_seconds + last.val_seconds > cfg.time_budget:
                result.stopped_early = True
                break
        model.train()
        order = list(range(len(usable)))
        rng.shuffle(order)
        batches = [[usable[i] for i in order[k:k + cfg.batch_size]] for k in range(0, len(order), cfg.batch_size)]
        t0 = time.perf_counter()
        total_loss = total_acc = 0.0
        total_steps = 0
        with Progress(TextColumn(f"epoch {epoch}/{cfg.epochs}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                      disable=not cfg.progress, transient=False) as bar:
            task = bar.add_task("train", total=len(batches), stats="")
            for b in batches:
                if cfg.time_budget and time.perf_counter() - started > cfg.time_budget:
                    break
                loss, acc, n = batch_loss(model, b, rng)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
                opt.step()
                total_loss += loss.item() * n
                total_acc += acc * n
                total_steps += n
                stats = f"loss {total_loss / max(total_steps, 1):.3f} step-acc {total_acc / max(total_steps, 1):.3f}"
                bar.update(task, advance=1, stats=stats)
                done = bar.tasks[0].completed
                if cfg.progress and cfg.log_every and not bar.console.is_terminal and done % cfg.log_every == 0:
                    print(f"epoch {epoch} batch {int(done)}/{len(batches)} {stats} "
                          f"{time.perf_counter() - t0:.0f} s", flush=True)
        train_s = time.perf_counter() - t0
        complete = bar.tasks[0].completed == len(batches)
        t1 = time.perf_counter()
        val_hit, val_hits1 = evaluate_hits(model, val_examples, beam=cfg.val_beam, batch=cfg.val_batch)
        rec = EpochRecord(epoch, total_loss / max(total_steps, 1), total_acc / max(total_steps, 1), val_hit, val_hits1,
                          train_s, time.perf_counter() - t1, total_steps, complete)
        result.history.append(rec)
        improved = (val_hits1, val_hit) > (result.best_hits1, result.best_hit)
        if cfg.out_dir is not None:
            info = {"epoch": epoch, "history": [asdict(r) for r in result.history], **meta}
            result.last_path = cfg.out_dir / "last.pt"
            model.save(result.last_path, info)
            if improved:
                result.best_path = cfg.out_dir / "best.pt"
                model.save(result.best_path, info)
        if improved:
            result.best_epoch, result.best_hits1, result.best_hit = epoch, val_hits1, val_hit
            bad_epochs = 0
        else:
            bad_epochs += 1
        if on_epoch is not None:
            on_epoch(rec)
        if cfg.out_dir is not None:
            (cfg.out_dir / "history.json").write_text(json.dumps(result.to_dict(), indent=2, default=str))
        if not complete:
            result.stopped_early = True
            break
        if bad_epochs >= cfg.patience:
            result.stopped_early = epoch < cfg.epochs
            break
    return result


def latest_checkpoint_file() -> Path:
    """``SGR_HOME/scr/latest.json``: the checkpoint that ``sgr scr train`` produced last."""
    from sgr.core.config import sgr_home

    return sgr_home() / "scr" / "latest.json"


def _first_per_hop(questions: Sequence[Any], n: int) -> list[Any]:
    if not n:
        return list(questions)
    seen: dict[Any, int] = {}
    out = []
    for q in questions:
        if seen.get(q.hops, 0) < n:
            seen[q.hops] = seen.get(q.hops, 0) + 1
            out.append(q)
    return out


def training_examples(dataset: str, *, store: Any, model_cfg: Any, train_cfg: ScrTrainConfig,
                      train_per_hop: int = 1000, val_per_hop: int = 100, graph_version: str | None = None,
                      supervision: str = "shortest", train_subset: int = 0,
                      val_subset: int = 0) -> tuple[list[Example], list[Example], str]:
    """The (train, validation) examples of ``dataset`` and the graph version they were cut from: questions → G_q
    (cached) → walks. Sets ``model_cfg``'s G_q settings and ``max_steps`` from the dataset's preset. ``store`` may be
    ``None`` when every G_q is already cached for ``graph_version``; ``supervision``: see
    :func:`sgr.methods.scr.data.build_examples`; ``train_subset``/``val_subset`` keep only the first N questions of
    each hop count of the selected training/validation questions (0: all)."""
    from rich.progress import Progress

    from sgr.methods.scr.data import SubgraphSource, build_examples
    from sgr.methods.scr.presets import preset, training_questions

    p = preset(dataset)
    model_cfg.subgraph = p.subgraph
    model_cfg.max_steps = p.max_steps
    source = SubgraphSource(store, model_cfg.subgraph, graph_version)
    train_qs, val_qs = training_questions(dataset, train_per_hop, val_per_hop, seed=train_cfg.seed)
    train_qs, val_qs = _first_per_hop(train_qs, train_subset), _first_per_hop(val_qs, val_subset)
    with Progress(disable=not train_cfg.progress) as bar:
        task = bar.add_task("subgraphs", total=len(train_qs) + len(val_qs))
        depth = model_cfg.max_steps
        train_ex = build_examples(source, train_qs, depth, lambda: bar.advance(task), supervision)
        val_ex = build_examples(source, val_qs, depth, lambda: bar.advance(task), supervision)
    return train_ex, val_ex, source.graph_version


def run_training(dataset: str, *, store: Any, out_dir: Path, model_cfg: Any, train_cfg: ScrTrainConfig,
                 train_per_hop: int = 1000, val_per_hop: int = 100, device: str = "auto", threads: int | None = 2,
                 graph_version: str | None = None, record_latest: bool = True, supervision: str = "shortest",
                 init_from: Path | None = None, train_subset: int = 0, val_subset: int = 0) -> ScrTrainResult:
    """Everything ``sgr scr train`` does: :func:`training_examples` → :func:`train` → checkpoints.

    ``init_from``: start from this checkpoint's weights (its model settings are kept) instead of the encoder's
    initial weights; the other arguments: :func:`training_examples`.
    """
    from sgr.methods.scr.model import SCRModel, resolve_device

    if threads:
        torch.set_num_threads(threads)
    dev = resolve_device(device)
    train_ex, val_ex, version = training_examples(
        dataset, store=store, model_cfg=model_cfg, train_cfg=train_cfg, train_per_hop=train_per_hop,
        val_per_hop=val_per_hop, graph_version=graph_version, supervision=supervision, train_subset=train_subset,
        val_subset=val_subset)
    seed_everything(train_cfg.seed)
    if init_from is not None:
        model, _ = SCRModel.load(init_from, dev)
        model_cfg.__dict__.update(model.cfg.__dict__)
    else:
        model = SCRModel(model_cfg).to(dev)
    train_cfg.out_dir = out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"dataset": dataset, "graph_version": version, "device": str(dev),
            "supervision": supervision, "init_from": str(init_from) if init_from else None,
            "train_with_walks": sum(bool(e.walks) for e in train_ex)}
    result = train(model, train_ex, val_ex, train_cfg, extra_meta=meta)
    if result.best_path is not None:
        result.answer_score = choose_answer_score(result.best_path, val_ex, beam=train_cfg.val_beam,
                                                  batch=train_cfg.val_batch, device=dev)
    if record_latest and result.best_path is not None:
        record_latest_checkpoint(result.best_path, dataset, version, model_cfg.single_step)
    return result


def record_latest_checkpoint(path: Path, dataset: str, graph_version: str, single_step: bool = False) -> None:
    """Record ``path`` in :func:`latest_checkpoint_file` as the default stepwise (or single-step) model."""
    f = latest_checkpoint_file()
    f.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(f.read_text()) if f.exists() else {}
    kind = "single-step" if single_step else "stepwise"
    data[kind] = str(Path(path).resolve())
    data[f"{kind}_dataset"] = dataset
    data[f"{kind}_graph_version"] = graph_version
    f.write_text(json.dumps(data, indent=2))
