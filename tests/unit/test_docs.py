"""The documentation's structure, checked from the tree: the README stays short and links to files that exist, and
every benchmark results file is described by an experiment record that has the fields a record needs.

(The site itself is built with ``mkdocs build --strict`` by ``scripts/docs.sh`` in CI, which fails on a broken link,
a missing page or anchor, or an unresolved reference.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXPERIMENTS = ROOT / "bench" / "experiments"
RESULTS = ROOT / "bench" / "results"
RECORD_FIELDS = ("**Question**", "**Command**", "**Commit**", "**Configuration**", "**Machine and load**",
                 "**Results file")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def records() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(EXPERIMENTS.glob("*.md"))
            if p.name not in ("README.md", "TEMPLATE.md")}


def test_readme_is_short_and_has_no_lab_notes() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    hashes = re.findall(r"`[0-9a-f]{7,12}`", text)
    assert not hashes, f"commit hashes in the README: {hashes} (they belong in bench/experiments/)"


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [t for t in LINK.findall(text) if "://" not in t and not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_every_record_has_the_fields_of_a_record() -> None:
    found = records()
    assert found, "no experiment records under bench/experiments/"
    for name, text in found.items():
        lacking = [f for f in RECORD_FIELDS if f not in text]
        assert not lacking, f"{name} lacks {lacking}"
        assert "## Figures" in text and "## Conclusion" in text, f"{name} lacks a Figures or Conclusion section"


def test_every_results_file_has_a_record_and_a_summary() -> None:
    text = "\n".join(records().values())
    files = [p for p in RESULTS.iterdir() if p.is_file()]
    unrecorded = [p.name for p in files if p.suffix in (".json", ".jsonl") and p.name not in text]
    assert not unrecorded, f"results files no record under bench/experiments/ names: {unrecorded}"
    for path in (p for p in files if p.suffix == ".json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data.get("summary"), dict), f"{path.name} has no summary dict"


def test_the_index_lists_every_record() -> None:
    index = (EXPERIMENTS / "README.md").read_text(encoding="utf-8")
    missing = [name for name in records() if f"({name})" not in index]
    assert not missing, f"bench/experiments/README.md does not list {missing}"
