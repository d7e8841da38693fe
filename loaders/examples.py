"""``sgr load example NAME``: Neo4j's own example graphs, loaded in one command.

``movies`` is the movie graph every Neo4j user meets first (``:play movies``): ``(:Movie {title, released,
tagline})``, ``(:Person {name, born})``, ``ACTED_IN {roles}``, ``DIRECTED``, ``PRODUCED``, ``WROTE``, ``REVIEWED
{summary, rating}``, ``FOLLOWS``. Its Cypher is not copied into sgr: :func:`movies_cypher` reads it from the Neo4j
Browser that sgr already vendors (the ``neo4j-browser`` jar under ``java/target/browser``, whose app bundle holds the
guide's ``CREATE`` statement as a JavaScript string).

The example is written as it is (a property graph, not sgr's ``:Entity`` shape) and then full-text indexes go on
its naming properties (:func:`sgr.graph.profile.create_name_indexes`) unless the caller says not to. Loading it twice
adds nothing: a database that already holds the movie *The Matrix* is left alone.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from sgr.core.errors import ConfigError, LoadError
from sgr.graph.profile import create_name_indexes, read_profile
from sgr.graph.store import ENTITY, GraphStore

EXAMPLES = ("movies",)
#: Where the movie guide's statement starts inside the Browser's app bundle.
MOVIES_START = "CREATE (TheMatrix:Movie"
#: The statement's last part shows the guide's first query; the load stops before it.
MOVIES_TAIL = re.compile(r"\n\s*WITH TomH as a\b.*\Z", re.S)


@dataclass
class ExampleReport:
    """What ``sgr load example`` did: nodes and relationships it created, indexes it made, or that it skipped."""

    name: str
    nodes: int = 0
    relationships: int = 0
    indexes: list[str] = field(default_factory=list)
    skipped: bool = False
    source: str = ""


def _js_string_at(text: str, start: int) -> str:
    """The JavaScript string literal that contains position ``start`` of ``text``, decoded."""
    open_at = max(text.rfind('"', 0, start), text.rfind("'", 0, start))
    quote = text[open_at]
    i = open_at + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    literal = text[open_at:i + 1]
    if quote == "'":  # a JSON string needs double quotes
        literal = '"' + literal[1:-1].replace('"', '\\"').replace("\\'", "'") + '"'
    try:
        return json.loads(literal)
    except json.JSONDecodeError as exc:
        raise LoadError(f"the movie graph's Cypher in the Neo4j Browser bundle cannot be read ({exc.msg})") from None


def movies_cypher(jar: Path | None = None) -> tuple[str, str]:
    """(the movie graph's ``CREATE`` statement, the file it came from) as the vendored Neo4j Browser holds it."""
    from sgr.graph.browser import browser_jar

    jar = jar or browser_jar()
    try:
        with zipfile.ZipFile(jar) as zf:
            for member in sorted(m for m in zf.namelist() if m.startswith("browser/") and m.endswith(".js")):
                text = zf.read(member).decode("utf-8", errors="replace")
                at = text.find(MOVIES_START)
                if at >= 0:
                    cypher = MOVIES_TAIL.sub("", _js_string_at(text, at)).strip().rstrip(";")
                    return cypher, f"{jar.name}!{member}"
    except zipfile.BadZipFile as exc:
        raise LoadError(f"{jar} is not a readable jar ({exc})") from None
    raise LoadError(f"{jar} holds no movie graph guide (no {MOVIES_START!r} in its browser/*.js)")


def load_example(store: GraphStore, name: str, *, index: bool = True, jar: Path | None = None) -> ExampleReport:
    """Load example ``name`` into ``store`` (see the module docstring)."""
    if name not in EXAMPLES:
        raise ConfigError(f"unknown example {name!r}: choose one of {', '.join(EXAMPLES)}")
    if store.read(f"MATCH (e:{ENTITY}) RETURN count(e) > 0 AS any")[0]["any"]:
        raise ConfigError("this database holds sgr's own :Entity graph; load the example into an empty database "
                          "(e.g. another SGR_HOME)")
    report = ExampleReport(name)
    cypher, report.source = movies_cypher(jar)
    if store.read("MATCH (m:Movie {title: 'The Matrix'}) RETURN count(m) > 0 AS any")[0]["any"]:
        report.skipped = True
    else:
        before = _counts(store)
        store.write(cypher)
        after = _counts(store)
        report.nodes, report.relationships = after[0] - before[0], after[1] - before[1]
    if index:
        report.indexes = create_name_indexes(store, read_profile(store), consent=True)
    return report


def _counts(store: GraphStore) -> tuple[int, int]:
    row = store.read("MATCH (n) WITH count(n) AS n OPTIONAL MATCH ()-[r]->() RETURN n, count(r) AS r")[0]
    return row["n"], row["r"]
