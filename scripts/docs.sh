#!/usr/bin/env bash
# Build the documentation site (MkDocs, mkdocs.yml) with --strict: a broken link, a missing page, an unresolved
# reference or an anchor that does not exist fails the build. The site goes to build/site (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict --quiet "$@"
echo "docs: built build/site"
