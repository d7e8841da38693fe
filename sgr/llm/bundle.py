"""A tuning bundle: the training step of ``sgr llm tune`` carried to another machine (a GPU one) and back.

The GPU machines this project can borrow have torch, transformers and peft but no graph store, no package
registry, no ``gguf`` package and no pydantic, and take at most 64 MiB of files per transfer (16 MiB per file
coming back) while the packaged GGUF is 98 MB. So the work is cut in three:

1. **Here** — ``sgr llm tune … --bundle DIR`` builds the data exactly as a local run would (same sources, split,
   overlap check) and writes :func:`write`: ``DIR/examples.jsonl`` (train, then validation), ``DIR/bundle.json``
   (the :class:`~sgr.llm.finetune.TuneConfig`, the data summary, ``eval_n``, the base model's name, size and
   SHA-256, the part names) and the base GGUF cut into ``DIR/parts/model.gguf.NN`` of at most ``part_mib`` MiB.
   Each transfer carries what fits; the parts may travel in separate transfers to one machine.
2. **There** — ``python -m sgr.llm.bundle DIR OUT`` (:func:`run`) joins the parts (checking size and SHA-256),
   trains with :func:`sgr.llm.finetune.train` on ``--device`` (``auto``: CUDA when present), generates the base and
   the tuned model's replies to the first ``eval_n`` validation questions, and writes ``OUT/weights.pt.NN`` (the
   trained weights — LoRA adapters or top layers — in fp16, in parts under 15 MiB) and ``OUT/result.json``
   (losses, steps, seconds, tokens/s, the device's name, the replies). Needs only torch, transformers, peft and
   ``gguf`` (a pure-Python wheel that travels with the bundle).
3. **Here** — ``sgr llm tune --from-bundle OUT --bundle DIR`` (:func:`read`) loads the weights, folds them into the
   base model (:func:`apply`) and exports and records them as a local run does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sgr.core.checkpoints import load_checkpoint
from sgr.core.errors import ConfigError, LLMError
from sgr.core.files import (RETURN_PART_BYTES, bundle_parser, bundle_result, cut_parts, join_parts, read_parts,
                            sha256_file)
from sgr.llm import finetune as ft

MANIFEST = "bundle.json"
EXAMPLES = "examples.jsonl"
RESULT = "result.json"
WEIGHTS = "weights.pt"


def write(out: Path, base: Path, train_ex: Sequence[ft.ChatExample], val_ex: Sequence[ft.ChatExample],
          cfg: ft.TuneConfig, *, eval_n: int, data: dict[str, Any], part_mib: int = 45) -> Path:
    """Write a bundle to ``out`` (see the module docstring); returns the manifest's path."""
    out.mkdir(parents=True, exist_ok=True)
    parts_dir = out / "parts"
    parts_dir.mkdir(exist_ok=True)
    with (out / EXAMPLES).open("w") as f:
        for split, exs in (("train", train_ex), ("val", val_ex)):
            for e in exs:
                f.write(json.dumps({"split": split, **asdict(e)}) + "\n")
    names = cut_parts(base, parts_dir / base.name, part_mib * 2**20)
    manifest = {"config": asdict(cfg), "eval_n": eval_n, "data": data, "base": base.name,
                "base_bytes": base.stat().st_size, "base_sha256": sha256_file(base), "parts": names,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return out / MANIFEST


def read_examples(bundle: Path) -> tuple[list[ft.ChatExample], list[ft.ChatExample]]:
    train, val = [], []
    for line in (bundle / EXAMPLES).read_text().splitlines():
        rec = json.loads(line)
        split = rec.pop("split")
        rec["shots"] = tuple(tuple(t) for t in rec.get("shots") or ())
        (train if split == "train" else val).append(ft.ChatExample(**rec))
    return train, val


def manifest(bundle: Path) -> dict[str, Any]:
    path = bundle / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{bundle}: no {MANIFEST} (not a tuning bundle; write one with `sgr llm tune --bundle`)")
    return json.loads(path.read_text())


def check_base(bundle: Path, base: Path) -> None:
    """Refuse to fold weights into another base model than the one the bundle carried."""
    if sha256_file(base) != manifest(bundle)["base_sha256"]:
        raise ConfigError(f"{base} is not the base model of the bundle {bundle} (SHA-256 differs)")


def config_of(man: dict[str, Any], **override: Any) -> ft.TuneConfig:
    return ft.TuneConfig(**{**man["config"], **{k: v for k, v in override.items() if v is not None}})


def run(bundle: Path, out: Path, *, part_folders: Sequence[Path] = (), device: str = "auto",
        workdir: Path | None = None) -> dict[str, Any]:
    """Train a bundle (on the machine that has the GPU); writes ``out/weights.pt.NN`` and ``out/result.json``."""
    import io

    import torch

    t0 = time.time()
    man = manifest(bundle)
    cfg = config_of(man, device=device)
    dev = ft.resolve_device(cfg.device)
    work = workdir or out
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    gguf_path = work / man["base"]
    if not (gguf_path.is_file() and gguf_path.stat().st_size == man["base_bytes"]):
        join_parts([bundle / "parts", *part_folders], man["parts"], gguf_path)
    if gguf_path.stat().st_size != man["base_bytes"] or sha256_file(gguf_path) != man["base_sha256"]:
        raise ConfigError(f"{gguf_path}: the joined parts differ from the bundle's base model (size or SHA-256)")
    model, tok = ft.load_base(gguf_path, dev, threads=cfg.threads)
    train_ex, val_ex = read_examples(bundle)
    probe = val_ex[:man["eval_n"]]
    g0 = time.time()
    base_replies = ft.generate(model, tok, probe, max_new_tokens=40)
    base_gen = time.time() - g0
    result = ft.train(model, tok, train_ex, val_ex, cfg, work / "train", log=print, show_progress=False)
    g0 = time.time()
    replies = ft.generate(model, tok, probe, max_new_tokens=40)
    gen_s = time.time() - g0
    state = load_checkpoint(result.state_path, what="tuned weights file")
    buf = io.BytesIO()
    torch.save({k: v.to(torch.float16) for k, v in state.items()}, buf)
    parts = cut_parts(buf.getvalue(), out / WEIGHTS, RETURN_PART_BYTES)
    device_name = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"
    res = {"result": {k: v for k, v in asdict(result).items() if k not in ("state_path", "config")},
           "config": asdict(cfg), "device": dev, "device_name": device_name, "weights_parts": parts,
           "validation_ids": [e.id for e in val_ex], "probe_ids": [e.id for e in probe],
           "base_replies": base_replies, "replies": replies,
           "seconds": {"total": time.time() - t0, "tune": result.seconds, "generation_base": base_gen,
                       "generation_per_question": gen_s / max(len(probe), 1)}}
    (out / RESULT).write_text(json.dumps(res, indent=2, default=str))
    return res


@dataclass
class Returned:
    """What came back from a bundle run."""

    state: dict[str, Any]
    result: dict[str, Any]


def read(out: Path) -> Returned:
    """The weights (fp32) and figures a bundle run wrote to ``out``."""
    import io

    res = bundle_result(out, None, "sgr.llm.bundle")
    state = load_checkpoint(io.BytesIO(read_parts([out], res["weights_parts"])), what="bundle's returned weights")
    return Returned(state={k: v.float() for k, v in state.items()}, result=res)


def apply(model, cfg: ft.TuneConfig, state: dict[str, Any]):  # noqa: ANN001, ANN201
    """``model`` with trained weights folded in (LoRA adapters merged, or top layers loaded)."""
    if cfg.method == "lora":
        return ft.merge_lora_state(model, cfg, state)
    missing = set(state) - set(model.state_dict())
    if missing:
        raise LLMError(f"trained weights do not fit this model (e.g. {sorted(missing)[0]})")
    model.load_state_dict(state, strict=False)
    return model


def main(argv: Sequence[str] | None = None) -> int:
    p = bundle_parser("python -m sgr.llm.bundle", "Train a tuning bundle.", "base model")
    args = p.parse_args(argv)
    res = run(args.bundle, args.out, part_folders=args.parts_from, device=args.device, workdir=args.workdir)
    print(json.dumps({k: res[k] for k in ("device_name", "seconds")} | {"result": res["result"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
