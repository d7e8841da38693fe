"""An SCR bundle: ``sgr scr train``'s training step carried to another machine (a GPU one) and back.

The GPU machines this project can borrow have torch, transformers and sentence-transformers but no graph store, no
package registry and no model weights, and take at most 64 MiB of files per transfer (16 MiB per file coming
back), while MPNet is 440 MB in fp32 and the G_q of 9,000 MetaQA questions some tens of MB. So, as for RCR's encoder
(:mod:`sgr.retrieval.encoder_bundle`, whose packing this reuses), the work is cut in three:

1. **Here** — :func:`write`: ``DIR/bundle.json`` (the :class:`~sgr.methods.scr.model.SCRConfig` and
   :class:`~sgr.methods.scr.train.ScrTrainConfig`, every example's question, answers and walks, the data summary),
   ``DIR/parts/examples.NN`` (the distinct G_q, :meth:`~sgr.methods.scr.data.ScrSubgraph.to_bytes` one after the
   other), ``DIR/base/`` and ``DIR/parts/weights.q8.NN`` (the encoder, int8 rows with fp32 row scales:
   :func:`~sgr.retrieval.encoder_bundle.pack_encoder`). Parts may travel in separate transfers.
2. **There** — ``python -m sgr.methods.scr.bundle DIR OUT`` (:func:`run`) joins and checks the parts, trains with
   :func:`~sgr.methods.scr.train.train` on ``--device`` (validation, early stopping, ``--time-budget`` so that a run
   ends inside one command's limit), picks the answer ranking on validation
   (:func:`~sgr.methods.scr.train.choose_answer_score`) and writes ``OUT/weights.pt.NN`` (the chosen epoch's
   *trained* weights — the top ``trainable_layers`` encoder layers, the GNN and the candidate layers — in fp16,
   parts under 15 MiB) and ``OUT/result.json`` (every epoch's loss, validation Hit/Hits@1 and seconds, the
   device's name).
3. **Here** — :func:`fold` loads them into a model built on this machine's original encoder and saves a plain
   checkpoint. The frozen lower layers here are the fp32 originals, there they were the int8 round trip (within
   half a quantisation step of each weight), and the node texts' frozen vectors are computed here by the original
   encoder: the figures that count are measured here, on the folded checkpoint.

Every encoder weight must be trained for the paper's configuration, which does not come back for MPNet (217 MiB in
fp16): :func:`write` refuses a configuration whose trained weights would not fit one transfer back, and names the
number of top layers that would.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError
from sgr.core.files import RETURN_BYTES, RETURN_PART_BYTES, bundle_parser, bundle_result, cut_parts, read_parts
from sgr.core.types import Question
from sgr.llm.encoders import encoder_path
from sgr.methods.scr.data import Example, ScrSubgraph, Walk
from sgr.methods.scr.model import SCRConfig, SCRModel, resolve_device
from sgr.methods.scr.train import (EpochRecord, ScrTrainConfig, ScrTrainResult, choose_answer_score, seed_everything,
                                   train, training_examples)
from sgr.retrieval.encoder_bundle import base_folder, pack_encoder

MANIFEST = "bundle.json"
RESULT = "result.json"
EXAMPLES = "examples"
WEIGHTS_BACK = "weights.pt"
#: ScrTrainConfig fields that are this machine's business, not the bundle's
_LOCAL = ("out_dir", "progress", "log_every")


def trained_bytes(model: SCRModel) -> int:
    """The size in fp16 of the weights that training changes (what comes back)."""
    return 2 * sum(p.numel() for p in model.parameters() if p.requires_grad)


def _pack_examples(train_ex: Sequence[Example], val_ex: Sequence[Example]) -> tuple[bytes, list[int], list[dict]]:
    """(the distinct G_q's bytes one after the other, their sizes, one record per example)."""
    blobs: list[bytes] = []
    index: dict[str, int] = {}
    records = []
    for split, exs in (("train", train_ex), ("val", val_ex)):
        for ex in exs:
            blob = ex.subgraph.to_bytes()
            key = hashlib.sha1(blob).hexdigest()
            if key not in index:
                index[key] = len(blobs)
                blobs.append(blob)
            records.append({"split": split, "question": asdict(ex.question), "subgraph": index[key],
                            "answers": [int(a) for a in ex.answers],
                            "walks": [[list(w.nodes), list(w.edges), list(w.directions)] for w in ex.walks]})
    return b"".join(blobs), [len(b) for b in blobs], records


def _unpack_examples(raw: bytes, sizes: Sequence[int], records: Sequence[dict]) -> tuple[list[Example], list[Example]]:
    starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    graphs = [ScrSubgraph.from_bytes(raw[starts[i]:starts[i + 1]]) for i in range(len(sizes))]
    out: dict[str, list[Example]] = {"train": [], "val": []}
    for r in records:
        walks = [Walk(tuple(n), tuple(e), tuple(d)) for n, e, d in r["walks"]]
        out[r["split"]].append(Example(Question(**r["question"]), graphs[r["subgraph"]], list(r["answers"]), walks))
    return out["train"], out["val"]


def write(out: Path, train_ex: Sequence[Example], val_ex: Sequence[Example], model_cfg: SCRConfig,
          train_cfg: ScrTrainConfig, *, data: dict[str, Any], part_mib: int = 50) -> Path:
    """Write a bundle to ``out`` (see the module docstring); returns the manifest's path. Refuses a configuration
    whose trained weights would not come back in one transfer."""
    model = SCRModel(SCRConfig.from_dict(model_cfg.to_dict()))
    size = trained_bytes(model)
    if size > RETURN_BYTES:
        per_layer = 2 * sum(p.numel() for p in model.encoder.encoder.layer[-1].parameters())
        fits = max(0, (RETURN_BYTES - (size - 2 * sum(p.numel() for p in model.encoder.parameters()
                                                      if p.requires_grad))) // per_layer)
        raise ConfigError(f"the trained weights of this SCR configuration ({size / 2**20:.0f} MiB in fp16) would not "
                          f"come back from the GPU machine in one transfer ({RETURN_BYTES // 2**20} MiB): train "
                          f"the top {fits} encoder layers at most (--trainable-layers {fits})")
    del model
    out.mkdir(parents=True, exist_ok=True)
    man: dict[str, Any] = {"model": model_cfg.to_dict(),
                           "train": {k: v for k, v in asdict(train_cfg).items() if k not in _LOCAL},
                           "data": data, **pack_encoder(encoder_path(model_cfg.encoder), out, part_mib)}
    raw, sizes, records = _pack_examples(train_ex, val_ex)
    man |= {"examples": records, "subgraph_sizes": sizes,
            "examples_parts": cut_parts(raw, out / "parts" / EXAMPLES, part_mib * 2**20),
            "examples_sha256": hashlib.sha256(raw).hexdigest(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    keys = ("model", "train", "examples", "examples_sha256", "weights_sha256")
    man["id"] = hashlib.sha256(json.dumps({k: man[k] for k in keys}, sort_keys=True).encode()).hexdigest()[:16]
    (out / MANIFEST).write_text(json.dumps(man))
    return out / MANIFEST


def manifest(bundle: Path) -> dict[str, Any]:
    path = bundle / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{bundle}: no {MANIFEST} (not an SCR bundle; write one with `sgr scr train --bundle DIR`)")
    man = json.loads(path.read_text())
    if "examples_parts" not in man:
        raise ConfigError(f"{bundle}: {MANIFEST} is not an SCR bundle's (no examples)")
    return man


def _examples(bundle: Path, man: dict[str, Any], part_folders: Sequence[Path]) -> tuple[list[Example], list[Example]]:
    raw = read_parts([bundle / "parts", *part_folders], man["examples_parts"])
    if hashlib.sha256(raw).hexdigest() != man["examples_sha256"]:
        raise ConfigError(f"{bundle}: the joined example parts differ from the bundle's (SHA-256)")
    return _unpack_examples(raw, man["subgraph_sizes"], man["examples"])


def run(bundle: Path, out: Path, *, part_folders: Sequence[Path] = (), device: str = "auto",
        workdir: Path | None = None, time_budget: float = 0.0) -> dict[str, Any]:
    """Train a bundle (on the machine that has the GPU); writes ``out/weights.pt.NN`` and ``out/result.json``.
    ``time_budget`` (seconds; 0: the bundle's) caps the whole run: no epoch starts that would end past it."""
    t0 = time.time()
    man = manifest(bundle)
    work = workdir or out
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    dev = resolve_device(device)
    base = base_folder(bundle, man, part_folders, work)
    train_ex, val_ex = _examples(bundle, man, part_folders)
    cfg = SCRConfig.from_dict({**man["model"], "encoder": str(base)})
    tcfg = ScrTrainConfig(**{**man["train"], "time_budget": time_budget or man["train"]["time_budget"]},
                          out_dir=work / "state", progress=True)
    seed_everything(tcfg.seed)
    model = SCRModel(cfg).to(dev)
    if dev.type == "cuda":
        from sgr.llm.encoders import sentence_encoder

        torch.set_float32_matmul_precision("high")
        sentence_encoder(str(base)).to(dev)  # the node texts' frozen vectors (eq. 2) on the GPU too
    t1 = time.time()
    model.texts([ex.subgraph.text(i) for ex in [*train_ex, *val_ex] for i in range(ex.subgraph.num_nodes)])
    texts_s = time.time() - t1
    if tcfg.time_budget:
        tcfg.time_budget = max(1.0, tcfg.time_budget - (time.time() - t0))
    result = train(model, train_ex, val_ex, tcfg, extra_meta={"bundle": man["id"], "device": str(dev)})
    if result.best_path is None:
        raise ConfigError(f"{bundle}: no epoch finished (no validation questions or a time budget below one epoch)")
    result.answer_score = choose_answer_score(result.best_path, val_ex, beam=tcfg.val_beam, batch=tcfg.val_batch,
                                              device=dev)
    trained, _ = SCRModel.load(result.best_path, "cpu")
    names = [n for n, p in trained.named_parameters() if p.requires_grad]
    state = trained.state_dict()
    buf = io.BytesIO()
    torch.save({n: state[n].half() for n in names}, buf)
    parts = cut_parts(buf.getvalue(), out / WEIGHTS_BACK, RETURN_PART_BYTES)
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    res = {"bundle": man["id"], "device": dev.type, "device_name": name, "weights_parts": parts,
           "result": result.to_dict(), "train_questions": len(train_ex), "val_questions": len(val_ex),
           "seconds": {"total": time.time() - t0, "node_texts": texts_s,
                       "train": sum(r.train_seconds + r.val_seconds for r in result.history)}}
    (out / RESULT).write_text(json.dumps(res, indent=2, default=str))
    return res


def fold(bundle: Path, returned: Path, out: Path) -> tuple[ScrTrainResult, dict[str, Any]]:
    """Load the weights a bundle run wrote to ``returned`` into a model on this machine's original encoder and
    save it as a checkpoint at ``out`` (``best.pt`` there, with ``history.json``); returns the training result and
    the run's ``result.json``. Refuses the output of another bundle."""
    man = manifest(bundle)
    res = bundle_result(returned, man["id"], "sgr.methods.scr.bundle")
    model = SCRModel(SCRConfig.from_dict(man["model"]))
    weights = load_checkpoint(io.BytesIO(read_parts([returned], res["weights_parts"])),
                              what="bundle's returned weights")
    expected = {n for n, p in model.named_parameters() if p.requires_grad}
    if set(weights) != expected:
        raise ConfigError(f"{returned}: the returned weights are not the trainable weights of the bundle's model "
                          f"({len(set(weights) ^ expected)} names differ)")
    with torch.no_grad():
        params = dict(model.named_parameters())
        for n, w in weights.items():
            params[n].copy_(w.float())
    r = res["result"]
    result = ScrTrainResult(history=[EpochRecord(**h) for h in r["history"]], best_epoch=r["best_epoch"],
                            best_hits1=r["best_hits1"], best_hit=r["best_hit"], best_path=out / "best.pt",
                            stopped_early=r["stopped_early"], answer_score=r.get("answer_score") or {})
    data = man["data"]
    model.save(out / "best.pt", {"epoch": result.best_epoch, "history": r["history"], **data,
                                 "train_questions": res["train_questions"], "val_questions": res["val_questions"],
                                 "device": res["device_name"], "bundle": man["id"], **result.answer_score})
    (out / "history.json").write_text(json.dumps(result.to_dict() | {"device_name": res["device_name"],
                                                                     "seconds": res["seconds"]}, indent=2))
    return result, res


def write_for_dataset(dataset: str, bundle: Path, *, store: Any, model_cfg: SCRConfig, train_cfg: ScrTrainConfig,
                      train_per_hop: int, val_per_hop: int, graph_version: str | None = None,
                      supervision: str = "shortest", train_subset: int = 0, val_subset: int = 0) -> Path:
    """``sgr scr train --bundle DIR``: the examples a local run would train on
    (:func:`~sgr.methods.scr.train.training_examples`), written as a bundle instead of trained."""
    train_ex, val_ex, version = training_examples(
        dataset, store=store, model_cfg=model_cfg, train_cfg=train_cfg, train_per_hop=train_per_hop,
        val_per_hop=val_per_hop, graph_version=graph_version, supervision=supervision, train_subset=train_subset,
        val_subset=val_subset)
    return write(bundle, train_ex, val_ex, model_cfg, train_cfg,
                 data={"dataset": dataset, "graph_version": version, "supervision": supervision,
                       "train_per_hop": train_per_hop, "val_per_hop": val_per_hop,
                       "train_with_walks": sum(bool(e.walks) for e in train_ex)})


def main(argv: Sequence[str] | None = None) -> int:
    p = bundle_parser("python -m sgr.methods.scr.bundle", "Train an SCR bundle.", "encoder weights and examples")
    p.add_argument("--time-budget", type=float, default=0.0,
                   help="seconds for the whole run (0: the bundle's setting): no epoch starts that would end past it")
    args = p.parse_args(argv)
    res = run(args.bundle, args.out, part_folders=args.parts_from, device=args.device, workdir=args.workdir,
              time_budget=args.time_budget)
    print(json.dumps({k: res[k] for k in ("device_name", "seconds")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
