#!/usr/bin/env bash
# Vendor the graph-drawing library of sgr's HTML evidence view (sgr/evidence/html.py).
#
# Usage: scripts/vendor_js.sh            rebuild sgr/assets/vis-network.min.js from the npm registry
#        scripts/vendor_js.sh --check    rebuild in a scratch folder and fail if it differs from the committed file
#
# - The versions are pinned by sgr/assets/package.json + package-lock.json (with npm's integrity hashes);
#   `npm ci` installs exactly those into build/vendor_js/ (git-ignored), with install scripts disabled.
# - The one file sgr needs is vis-network's standalone UMD build (`standalone/umd/vis-network.min.js`: the
#   library with its dependencies bundled, defining `window.vis`). It is committed, so `pip install -e .` and
#   the HTML view work offline without npm; this script only reproduces or updates it.
# - Licences: vis-network is dual licensed Apache-2.0 OR MIT; both texts are copied next to the file.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ASSETS="$ROOT/sgr/assets"
BUILD="$ROOT/build/vendor_js"
CHECK=0
[[ "${1:-}" == "--check" ]] && CHECK=1

command -v npm >/dev/null || { echo "vendor_js.sh: npm is not installed (apt-get install -y npm)" >&2; exit 2; }

rm -rf "$BUILD"
mkdir -p "$BUILD"
cp "$ASSETS/package.json" "$ASSETS/package-lock.json" "$BUILD/"
(cd "$BUILD" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

SRC="$BUILD/node_modules/vis-network/standalone/umd/vis-network.min.js"
[[ -f "$SRC" ]] || { echo "vendor_js.sh: $SRC missing after npm ci" >&2; exit 1; }
VERSION="$(node -p "require('$BUILD/node_modules/vis-network/package.json').version")"

if [[ $CHECK == 1 ]]; then
  if cmp -s "$SRC" "$ASSETS/vis-network.min.js"; then
    echo "vendor_js.sh: sgr/assets/vis-network.min.js matches vis-network $VERSION from the registry"
    exit 0
  fi
  echo "vendor_js.sh: sgr/assets/vis-network.min.js differs from vis-network $VERSION: run scripts/vendor_js.sh" >&2
  exit 1
fi

cp "$SRC" "$ASSETS/vis-network.min.js"
cp "$BUILD/node_modules/vis-network/LICENSE-MIT" "$ASSETS/vis-network.LICENSE-MIT"
cp "$BUILD/node_modules/vis-network/LICENSE-APACHE-2.0" "$ASSETS/vis-network.LICENSE-APACHE-2.0"
echo "vendored vis-network $VERSION: $(wc -c < "$ASSETS/vis-network.min.js") bytes, sha256 $(sha256sum "$ASSETS/vis-network.min.js" | cut -d' ' -f1)"
