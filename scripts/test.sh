#!/usr/bin/env bash
# Run sgr's test suite against a real Neo4j 5.26 (started here on a free port, stopped at the end)
# and the real local LLM. Without arguments it runs everything (tests/unit and tests/e2e); extra arguments go to
# pytest, e.g. `bash scripts/test.sh tests/unit` (no server, no model) or `bash scripts/test.sh tests/e2e/loaders -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
# a home made here (no SGR_TEST_HOME) is removed at the end: a store, a model and their logs, about 0.7 GiB
made_home=""
if [ -z "${SGR_TEST_HOME:-}" ]; then made_home="$(mktemp -d -t sgr-test-XXXXXX)"; fi
export SGR_HOME="${SGR_TEST_HOME:-$made_home}"
trap '.venv/bin/sgr neo4j stop >/dev/null 2>&1 || true; .venv/bin/sgr llm stop >/dev/null 2>&1 || true; [ -z "$made_home" ] || rm -rf "$made_home"' EXIT
export SGR_REQUIRE_LLM="${SGR_REQUIRE_LLM:-1}"
export PYTHONUNBUFFERED=1
.venv/bin/sgr neo4j start --heap 2g --pagecache 512m
export NEO4J_URI="$(.venv/bin/python -c 'import json,os;print(json.load(open(os.environ["SGR_HOME"]+"/neo4j/server.json"))["uri"])')"
set +e
.venv/bin/python -m pytest -q "$@"
rc=$?
set -e
# pytest exits 5 when it collected no test: that is a failure here too.
exit $rc
