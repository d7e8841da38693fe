"""Writing tuned weights for llama.cpp: the base GGUF with some decoder layers replaced (merged weights).

:func:`write_merged` copies a llama-architecture GGUF file — every metadata field (tokenizer, chat template,
hyper-parameters) and every tensor, byte for byte — except the tensors of the tuned layers, which are written
from the transformers state dict (matrices as F16, norm vectors as F32). Untouched layers keep their original
quantisation (Q4_1 for the packaged model), so the file grows only by the tuned layers' size.

Names and layout follow llama.cpp's ``convert_hf_to_gguf.py`` (``LlamaModel``): ``model.layers.N.self_attn.q_proj``
→ ``blk.N.attn_q`` … and the query/key rows are permuted back to llama.cpp's rotary layout (the inverse of what
transformers' GGUF loader undoes):

    permute(W, h) = W.reshape(h, 2, d/(2h), n).swapaxes(1, 2).reshape(d, n)   (h = heads, or KV heads for K)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sgr.core.errors import LLMError

#: transformers name suffix → llama.cpp tensor name suffix (per block).
HF_TO_GGUF = {
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "input_layernorm.weight": "attn_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
}
_LAYER = re.compile(r"^model\.layers\.(\d+)\.(.+)$")


def permute(weights: np.ndarray, n_head: int, n_head_kv: int | None = None) -> np.ndarray:
    """llama.cpp's rotary row order for a q/k projection (``convert_hf_to_gguf.LlamaModel.permute``)."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return (weights.reshape(n_head, 2, weights.shape[0] // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))


def gguf_name(hf_name: str) -> str:
    m = _LAYER.match(hf_name)
    if not m or m.group(2) not in HF_TO_GGUF:
        raise LLMError(f"cannot map tensor {hf_name!r} to a llama.cpp name (only decoder layers are exported)")
    return f"blk.{m.group(1)}.{HF_TO_GGUF[m.group(2)]}"


def gguf_tensors(state: Mapping[str, Any], n_head: int, n_head_kv: int) -> dict[str, np.ndarray]:
    """Tuned transformers tensors → llama.cpp names and layout (matrices F16, vectors F32)."""
    out = {}
    for name, tensor in state.items():
        arr = tensor.detach().float().cpu().numpy() if hasattr(tensor, "detach") else np.asarray(tensor, np.float32)
        target = gguf_name(name)
        if target.endswith("attn_q.weight"):
            arr = permute(arr, n_head, n_head)
        elif target.endswith("attn_k.weight"):
            arr = permute(arr, n_head, n_head_kv)
        out[target] = arr.astype(np.float16) if arr.ndim == 2 else arr.astype(np.float32)
    return out


#: How tuned matrices are written: ``f16``, or ``q8_0`` (llama.cpp's 8-bit blocks of 32, written with gguf-py's
#: quantiser; half the bytes of F16, for models whose every layer was tuned).
MATRIX_TYPES = ("f16", "q8_0")


def write_merged(base: Path, out: Path, state: Mapping[str, Any], *, metadata: Mapping[str, str] = (),
                 matrix_type: str = "f16", add: bool = False) -> Path:
    """Write ``out``: ``base`` with the tensors in ``state`` (transformers names) replaced — or, with ``add``, added
    to the base's dequantised tensors (LoRA's ``ΔW``) — matrices as ``matrix_type``; ``metadata`` adds string fields
    (e.g. ``sgr.graph_version``). Written to a temporary name first, then renamed."""
    import gguf

    if matrix_type not in MATRIX_TYPES:
        raise LLMError(f"matrix type must be one of {', '.join(MATRIX_TYPES)}, got {matrix_type!r}")

    reader = gguf.GGUFReader(base)
    arch = str(reader.fields["general.architecture"].contents())
    if arch != "llama":
        raise LLMError(f"{base}: architecture {arch!r}; only llama-family GGUF files can be exported")
    n_head = int(reader.fields["llama.attention.head_count"].contents())
    n_head_kv = int(reader.fields["llama.attention.head_count_kv"].contents())
    new = gguf_tensors(state, n_head, n_head_kv)
    names = {t.name for t in reader.tensors}
    unknown = sorted(set(new) - names)
    if unknown:
        raise LLMError(f"{base}: has no tensor {unknown[0]} (tuned weights from another model?)")
    tmp = out.with_name(out.name + ".part")
    writer = gguf.GGUFWriter(tmp, arch=arch, endianess=reader.endianess)
    for fld in reader.fields.values():
        if fld.name == gguf.Keys.General.ARCHITECTURE or fld.name.startswith("GGUF."):
            continue
        vtype = fld.types[0]
        sub = fld.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(fld.name, fld.contents(), vtype, sub_type=sub)
    for key, value in dict(metadata).items():
        writer.add_key_value(key, str(value), gguf.GGUFValueType.STRING)
    for t in reader.tensors:
        if t.name in new:
            arr = new[t.name]
            expected = tuple(int(x) for x in reversed(t.shape.tolist()))
            if arr.shape != expected:
                raise LLMError(f"tensor {t.name}: tuned shape {arr.shape} differs from the base's {expected}")
            if add:
                new[t.name] = arr = gguf.quants.dequantize(t.data, t.tensor_type).reshape(expected) + arr
            if arr.ndim == 2 and matrix_type == "q8_0":
                q8 = gguf.GGMLQuantizationType.Q8_0
                new[t.name] = arr = gguf.quants.quantize(arr.astype(np.float32), q8)
                writer.add_tensor_info(t.name, arr.shape, arr.dtype, arr.nbytes, q8)
                continue
            writer.add_tensor_info(t.name, arr.shape, arr.dtype, arr.nbytes)
        else:
            writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in reader.tensors:
        writer.write_tensor_data(new[t.name] if t.name in new else t.data, tensor_endianess=reader.endianess)
    writer.close()
    tmp.replace(out)
    return out


def base_tensor(base: Path, name: str) -> np.ndarray:
    """One tensor of a GGUF file, dequantised to float32 in its numpy layout (tests compare exports with it)."""
    return base_tensors(base, [name])[name]


def base_tensors(base: Path, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Several tensors of a GGUF file, read once (:func:`base_tensor`)."""
    import gguf

    reader = gguf.GGUFReader(base)
    wanted = set(names)
    got = {t.name: gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(
        tuple(int(x) for x in reversed(t.shape.tolist()))) for t in reader.tensors if t.name in wanted}
    missing = [n for n in names if n not in got]
    if missing:
        raise LLMError(f"{base}: no tensor {missing[0]}")
    return got


def write_provenance(weights: Path, data: Mapping[str, Any]) -> Path:
    """``<weights>.json`` next to the weights: graph version, data, steps, validation figures."""
    path = weights.with_suffix(".json")
    path.write_text(json.dumps(dict(data), indent=2, default=str))
    return path


def read_provenance(weights: Path) -> dict[str, Any] | None:
    path = weights.with_suffix(".json")
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None
