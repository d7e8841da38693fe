"""An encoder bundle: RCR's fine-tuned encoder trained on another machine (a GPU one) and folded in here.

The GPU machines this project can borrow have torch, transformers, peft and sentence-transformers, but no
package registry and no model weights, and take at most 64 MiB of files per transfer (16 MiB per file coming
back) while all-mpnet-base-v2 is 440 MB in fp32. So, as for the language model (:mod:`sgr.llm.bundle`), the training
step travels alone:

1. **Here** — :func:`write`: ``DIR/bundle.json`` (the :class:`~sgr.retrieval.encoder_training.EncoderTrainConfig`,
   the training and validation questions with their gold relations, the training universe and the vocabulary, the
   data summary), ``DIR/base/`` (the encoder folder's small files: config, tokenizer, pooling) and its weights
   **quantised for the trip** — every matrix of 64k entries or more as int8 with one fp32 scale per row
   (``w ≈ scale_row · q``, ``scale_row = max|w_row| / 127``), the rest fp16 — cut into ``DIR/parts/weights.q8.NN``
   (110 MB for MPNet, in parts of ``part_mib``). Each transfer carries what fits.
2. **There** — ``python -m sgr.retrieval.encoder_bundle DIR OUT`` (:func:`run`) joins the parts (size and SHA-256
   checked), writes the dequantised encoder folder, trains LoRA adapters with
   :func:`~sgr.retrieval.encoder_training.train_encoder` on ``--device`` and writes ``OUT/adapters.pt`` (the chosen
   epoch's adapters, fp16, a few MB; with ``lora_rank = 0`` every weight, see below) and ``OUT/result.json``
   (every epoch's loss, validation RRA and seconds, the device's name).
3. **Here** — :func:`fold` folds the adapters into the *original* fp32 encoder (``W ← W + (α/r)·B A``) and saves a
   plain encoder folder. The adapters were trained over the int8 round trip of ``W``, which is within half a step
   (``scale_row / 2``) of it; the figures that count are measured here, on the folded encoder.

With ``lora_rank = 0`` every weight is trained and comes back in fp16 (``OUT/weights.pt.NN``, parts under 15 MiB):
that fits one transfer back for MiniLM (45 MB), not for MPNet (220 MB), whose bundle therefore needs LoRA.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError
from sgr.core.files import (RETURN_BYTES, RETURN_PART_BYTES, bundle_parser, bundle_result, cut_parts, join_parts,
                            read_parts, sha256_file)
from sgr.llm.encoders import WEIGHTS, encoder_path, fresh_sentence_encoder
from sgr.graph.store import GraphStore
from sgr.retrieval.encoder_training import (ADAPTERS, BEST, EncoderTrainConfig, EncoderTrainResult, merge_adapters,
                                            save_encoder_model, train_encoder)
from sgr.retrieval.supervision import RelationExample
from sgr.retrieval.training import (EpochLog, TrainedModel, cosine_rra, default_model_path, encoder_folder,
                                    training_data, validation_ks)

MANIFEST = "bundle.json"
RESULT = "result.json"
QUANTISED = "weights.q8"
BASE = "base"
MIN_QUANTISED = 65_536  # matrices with at least this many entries travel as int8
SMALL_FILE = 4 << 20  # encoder files up to this size travel as they are (config, tokenizer, pooling)
WEIGHTS_BACK = "weights.pt"  # every trained weight, fp16 (lora_rank = 0)


def quantise(state: dict[str, torch.Tensor]) -> dict[str, dict[str, torch.Tensor]]:
    """Every float matrix of ``MIN_QUANTISED`` entries or more as int8 rows and fp32 row scales; the rest fp16."""
    packed: dict[str, dict[str, torch.Tensor]] = {}
    for name, t in state.items():
        if t.is_floating_point() and t.ndim == 2 and t.numel() >= MIN_QUANTISED:
            scale = t.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
            packed[name] = {"q": torch.round(t.float() / scale).to(torch.int8), "scale": scale}
        else:
            packed[name] = {"t": t.half() if t.is_floating_point() else t}
    return packed


def dequantise(packed: dict[str, dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The fp32 weights of :func:`quantise`'s output."""
    return {name: (p["q"].float() * p["scale"]) if "q" in p else
            (p["t"].float() if p["t"].is_floating_point() else p["t"]) for name, p in packed.items()}


def _example(rec: dict[str, Any]) -> RelationExample:
    return RelationExample(rec["id"], rec["question"], tuple(tuple(p) for p in rec["paths"]), rec.get("hops"))


def _bundle_id(man: dict[str, Any]) -> str:
    keys = ("config", "train", "val", "universe", "vocabulary", "weights_sha256")
    return hashlib.sha256(json.dumps({k: man[k] for k in keys}, sort_keys=True).encode()).hexdigest()[:16]


def pack_encoder(folder: Path, out: Path, part_mib: int = 50) -> dict[str, Any]:
    """Write an encoder folder for the trip: its small files to ``out/base/`` and its weights quantised
    (:func:`quantise`) in ``out/parts/weights.q8.NN``; returns the manifest's ``parts``, ``weights_bytes`` and
    ``weights_sha256`` (:func:`base_folder` rebuilds the folder from them). Also used by SCR's bundle."""
    from safetensors.torch import load_file

    shutil.rmtree(out / BASE, ignore_errors=True)
    shutil.rmtree(out / "parts", ignore_errors=True)
    (out / "parts").mkdir(parents=True)
    for f in folder.rglob("*"):
        if f.is_file() and f.name != WEIGHTS and f.stat().st_size <= SMALL_FILE and not f.name.startswith("."):
            dst = out / BASE / f.relative_to(folder)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
    buf = io.BytesIO()
    torch.save(quantise(load_file(str(folder / WEIGHTS))), buf)
    raw = buf.getvalue()
    names = cut_parts(raw, out / "parts" / QUANTISED, part_mib * 2**20)
    return {"parts": names, "weights_bytes": len(raw), "weights_sha256": hashlib.sha256(raw).hexdigest()}


def write(out: Path, train: Sequence[RelationExample], val: Sequence[RelationExample], universe: Sequence[str],
          vocabulary: Sequence[str], cfg: EncoderTrainConfig, *, data: dict[str, Any], part_mib: int = 50) -> Path:
    """Write a bundle to ``out`` (see the module docstring); returns the manifest's path."""
    folder = encoder_path(cfg.encoder)
    if cfg.lora_rank < 1 and (folder / WEIGHTS).stat().st_size // 2 > RETURN_BYTES:
        raise ConfigError(f"every weight of {cfg.encoder} in fp16 would not come back from the GPU machine in one "
                          "transfer (64 MiB): train LoRA adapters (--lora-rank 16, say)")
    man: dict[str, Any] = {
        "encoder": cfg.encoder, "config": asdict(cfg), "data": data,
        "train": [asdict(e) for e in train], "val": [asdict(e) for e in val],
        "universe": list(universe), "vocabulary": list(vocabulary), **pack_encoder(folder, out, part_mib),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    man["id"] = _bundle_id(man)
    (out / MANIFEST).write_text(json.dumps(man))
    return out / MANIFEST


def manifest(bundle: Path) -> dict[str, Any]:
    path = bundle / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{bundle}: no {MANIFEST} (not an encoder bundle; write one with "
                          "`sgr relations train --method encoder --bundle DIR`)")
    return json.loads(path.read_text())


def base_folder(bundle: Path, man: dict[str, Any], part_folders: Sequence[Path], work: Path) -> Path:
    """The dequantised encoder folder under ``work`` (joined and written once) from what :func:`pack_encoder`
    wrote into ``bundle`` and ``man``; parts missing there are looked for in ``part_folders``."""
    from safetensors.torch import save_file

    folder = work / BASE
    if (folder / WEIGHTS).is_file():
        return folder
    joined = join_parts([bundle / "parts", *part_folders], man["parts"], work / QUANTISED)
    if joined.stat().st_size != man["weights_bytes"] or sha256_file(joined) != man["weights_sha256"]:
        raise ConfigError(f"{joined}: the joined parts differ from the bundle's weights (size or SHA-256)")
    shutil.copytree(bundle / BASE, folder, dirs_exist_ok=True)
    state = dequantise(load_checkpoint(joined, what="quantised encoder weights"))
    save_file({k: v.contiguous() for k, v in state.items()}, str(folder / WEIGHTS))
    joined.unlink()
    return folder


def run(bundle: Path, out: Path, *, part_folders: Sequence[Path] = (), device: str = "auto",
        workdir: Path | None = None) -> dict[str, Any]:
    """Train a bundle (on the machine that has the GPU); writes ``out/adapters.pt`` and ``out/result.json``.
    Resumes from ``workdir`` (default ``out``) when the same command runs again."""
    t0 = time.time()
    man = manifest(bundle)
    work = workdir or out
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    base = base_folder(bundle, man, part_folders, work)
    cfg = EncoderTrainConfig(**{**man["config"], "encoder": str(base), "device": device})
    result = train_encoder([_example(r) for r in man["train"]], [_example(r) for r in man["val"]], man["universe"],
                           man["vocabulary"], cfg, out=work / "encoder", state_dir=work / "state",
                           progress=lambda log: print(json.dumps(asdict(log)), flush=True))
    if cfg.lora_rank:
        adapters = load_checkpoint(work / "state" / ADAPTERS, what="encoder adapters")
        torch.save({k: v.half() for k, v in adapters.items()}, out / ADAPTERS)
        parts: list[str] = []
    else:
        best = load_checkpoint(work / "state" / BEST, what="encoder state")
        buf = io.BytesIO()
        torch.save({k: v.half() for k, v in best.items()}, buf)
        parts = cut_parts(buf.getvalue(), out / WEIGHTS_BACK, RETURN_PART_BYTES)
    name = torch.cuda.get_device_name(0) if result.device == "cuda" else "cpu"
    res = {"bundle": man["id"], "device": result.device, "device_name": name, "weights_parts": parts,
           "result": {k: v for k, v in asdict(result).items() if k != "folder"},
           "seconds": {"total": time.time() - t0, "train": result.seconds}}
    (out / RESULT).write_text(json.dumps(res, indent=2, default=str))
    return res


@dataclass
class Folded:
    """The encoder folded here from a bundle run, with how its training went there."""

    result: EncoderTrainResult
    config: EncoderTrainConfig
    device_name: str


def fold(bundle: Path, returned: Path, out: Path) -> Folded:
    """Fold the adapters a bundle run wrote to ``returned`` into this machine's original encoder and save it as
    a plain encoder folder at ``out``. Refuses the output of another bundle."""
    man = manifest(bundle)
    res = bundle_result(returned, man["id"], "sgr.retrieval.encoder_bundle")
    cfg = EncoderTrainConfig(**man["config"])
    st = fresh_sentence_encoder(man["encoder"])
    if cfg.lora_rank:
        adapters = load_checkpoint(returned / ADAPTERS, what="bundle's returned adapters")
        merge_adapters(st, {k: v.float() for k, v in adapters.items()}, cfg.lora_rank, cfg.lora_alpha)
    else:
        weights = load_checkpoint(io.BytesIO(read_parts([returned], res["weights_parts"])),
                                  what="bundle's returned weights")
        st[0].auto_model.load_state_dict({k: v.float() for k, v in weights.items()})
    out.mkdir(parents=True, exist_ok=True)
    st.save(str(out))
    r = res["result"]
    result = EncoderTrainResult(
        folder=out, best_epoch=int(r["best_epoch"]), best_val={int(k): float(v) for k, v in r["best_val"].items()},
        history=[EpochLog(int(h["epoch"]), float(h["loss"]), {int(k): float(v) for k, v in h["val_rra"].items()},
                          float(h["seconds"])) for h in r["history"]],
        universe_size=int(r["universe_size"]), train_questions=int(r["train_questions"]),
        val_questions=int(r["val_questions"]), seconds=float(r["seconds"]), device=res["device"])
    return Folded(result, cfg, res["device_name"])


def write_for_store(store: GraphStore, dataset: str, bundle: Path, *, config: EncoderTrainConfig,
                    data_dir: Path | None = None, limit: int | None = None, val_fraction: float = 0.1) -> Path:
    """``sgr relations train --method encoder --bundle DIR``: the data a local run would train on (the store's
    vocabulary, ``dataset``'s split), written as a bundle instead of trained."""
    data = training_data(store, dataset, data_dir=data_dir, limit=limit, val_fraction=val_fraction, seed=config.seed)
    return write(bundle, data.train, data.val, data.universe, data.vocabulary, config,
                 data={"dataset": dataset, "graph_version": data.graph_version, "limit": limit,
                       "val_fraction": val_fraction})


def fold_for_store(store: GraphStore, bundle: Path, returned: Path, *, out: Path | None = None) -> TrainedModel:
    """``sgr relations train --bundle DIR --from-bundle OUT``: fold a bundle run's adapters and save the model file
    where a local run would (``load_retriever("auto")`` finds it). Refuses a bundle written for another graph."""
    man = manifest(bundle)
    dataset, version = man["data"].get("dataset"), man["data"].get("graph_version")
    if version != store.graph_version():
        raise ConfigError(f"{bundle}: written for graph version {version}, the store holds {store.graph_version()}")
    path = Path(out) if out else default_model_path(dataset, version, "encoder")
    folded = fold(bundle, returned, encoder_folder(path))
    save_encoder_model(path, folded.result, dataset=dataset, graph_version=version,
                       vocabulary_size=len(man["vocabulary"]), config=folded.config)
    val = [_example(r) for r in man["val"]]
    cosine_val = cosine_rra(val, man["vocabulary"], man["encoder"], validation_ks(folded.config.select_k)) \
        if val else {}
    return TrainedModel(path=path, dataset=dataset, graph_version=version, result=folded.result,
                        vocabulary_size=len(man["vocabulary"]), cosine_val=cosine_val)


def main(argv: Sequence[str] | None = None) -> int:
    p = bundle_parser("python -m sgr.retrieval.encoder_bundle", "Train an encoder bundle.", "weights")
    args = p.parse_args(argv)
    res = run(args.bundle, args.out, part_folders=args.parts_from, device=args.device, workdir=args.workdir)
    print(json.dumps({k: res[k] for k in ("device_name", "seconds")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
