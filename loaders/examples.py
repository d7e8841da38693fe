"""``sgr load example NAME``: Neo4j's own example graphs, loaded in one command.

``movies`` is the movie graph every Neo4j user meets first (``:play movies``): ``(:Movie {title, released,
tagline})``, ``(:Person {name, born})``, ``ACTED_IN {roles}``, ``DIRECTED``, ``PRODUCED``, ``WROTE``, ``REVIEWED
{summary, rating}``, ``FOLLOWS``. Its Cypher is not copied into sgr: :func:`movies_cypher` reads it from the Neo4j
Browser that sgr already vendors (the ``neo4j-browser`` jar under ``java/target/browser``, whose app bundle holds the
guide's ``CREATE`` statement as a JavaScript string).

``metaqa`` is the MetaQA KB (``kb.txt``: ``head|relation|tail``) as a property graph rather than sgr's ``:Entity``
shape: ``(:Movie {title, release_year, imdb_rating, imdb_votes})`` for every head, ``(:Person {name})`` for directors,
writers and actors, ``(:Genre)``, ``(:Language)``, ``(:Tag)`` nodes named by ``name``, and ``DIRECTED_BY``,
``WRITTEN_BY``, ``STARRED_ACTORS``, ``HAS_GENRE``, ``IN_LANGUAGE``, ``HAS_TAGS`` from the movie. MetaQA merges movies
of one title: a title with several release years (686 of 16,098) keeps the earliest. It needs an empty database, and
creates range indexes on the naming properties to join the relationships.

The examples are written as they are and then full-text indexes go on their naming properties
(:func:`sgr.graph.profile.create_name_indexes`) unless the caller says not to. Loading the movie graph twice adds
nothing: a database that already holds the movie *The Matrix* is left alone.
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

EXAMPLES = ("movies", "metaqa")
#: MetaQA's relations → (relationship type from the movie, the tail's label); the rest are literals of the movie.
METAQA_RELATIONSHIPS = {"directed_by": ("DIRECTED_BY", "Person"), "written_by": ("WRITTEN_BY", "Person"),
                        "starred_actors": ("STARRED_ACTORS", "Person"), "has_genre": ("HAS_GENRE", "Genre"),
                        "in_language": ("IN_LANGUAGE", "Language"), "has_tags": ("HAS_TAGS", "Tag")}
METAQA_PROPERTIES = {"release_year": "release_year", "has_imdb_rating": "imdb_rating",
                     "has_imdb_votes": "imdb_votes"}
BATCH = 10_000
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


def load_example(store: GraphStore, name: str, *, index: bool = True, jar: Path | None = None,
                 path: Path | None = None) -> ExampleReport:
    """Load example ``name`` into ``store`` (see the module docstring); ``path``: MetaQA's ``kb.txt``."""
    if name not in EXAMPLES:
        raise ConfigError(f"unknown example {name!r}: choose one of {', '.join(EXAMPLES)}")
    if store.read(f"MATCH (e:{ENTITY}) RETURN count(e) > 0 AS any")[0]["any"]:
        raise ConfigError("this database holds sgr's own :Entity graph; load the example into an empty database "
                          "(e.g. another SGR_HOME)")
    if path is not None and name != "metaqa":
        raise ConfigError(f"example {name!r} reads no file: --from is for metaqa")
    report = ExampleReport(name)
    if name == "metaqa":
        load_metaqa(store, path, report)
    else:
        load_movies(store, jar, report)
    if index:
        report.indexes = create_name_indexes(store, read_profile(store), consent=True)
    return report


def load_movies(store: GraphStore, jar: Path | None, report: ExampleReport) -> None:
    cypher, report.source = movies_cypher(jar)
    if store.read("MATCH (m:Movie {title: 'The Matrix'}) RETURN count(m) > 0 AS any")[0]["any"]:
        report.skipped = True
    else:
        before = _counts(store)
        store.write(cypher)
        after = _counts(store)
        report.nodes, report.relationships = after[0] - before[0], after[1] - before[1]


def load_metaqa(store: GraphStore, path: Path | None, report: ExampleReport) -> None:
    """The MetaQA KB at ``path`` (default ``SGR_SHARED_DATA/metaqa/kb.txt``) as a property graph."""
    from sgr.core.config import shared_data_dir

    path = Path(path) if path else shared_data_dir() / "metaqa" / "kb.txt"
    report.source = str(path)
    if store.read("MATCH (n) RETURN count(n) > 0 AS any")[0]["any"]:
        raise ConfigError("the MetaQA property graph loads into an empty database only (e.g. another SGR_HOME)")
    movies: dict[str, dict] = {}
    tails: dict[str, set[str]] = {}
    edges: dict[tuple[str, str], dict[tuple[str, str], None]] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LoadError(f"{path}: cannot read the MetaQA KB: {exc.strerror}") from None
    for no, line in enumerate(lines, 1):
        parts = line.split("|")
        if len(parts) != 3 or not all(parts):
            raise LoadError(f"{path}:{no}: expected head|relation|tail, got {line[:80]!r}")
        head, rel, tail = parts
        movie = movies.setdefault(head, {"title": head})
        if rel in METAQA_PROPERTIES:
            key = METAQA_PROPERTIES[rel]
            value = int(tail) if key == "release_year" and tail.isdigit() else tail
            if key not in movie or (key == "release_year" and isinstance(value, int) and value < movie[key]):
                movie[key] = value
        elif rel in METAQA_RELATIONSHIPS:
            rtype, label = METAQA_RELATIONSHIPS[rel]
            tails.setdefault(label, set()).add(tail)
            edges.setdefault((rtype, label), {})[(head, tail)] = None  # a repeated line is one relationship
        else:
            raise LoadError(f"{path}:{no}: unknown MetaQA relation {rel!r}")
    store.write("CREATE INDEX sgr_metaqa_movie_title IF NOT EXISTS FOR (n:Movie) ON (n.title)")
    for label in tails:
        store.write(f"CREATE INDEX sgr_metaqa_{label.lower()}_name IF NOT EXISTS FOR (n:{label}) ON (n.name)")
    store.write("CALL db.awaitIndexes(300)")
    rows = list(movies.values())
    report.nodes = store.write_batches("UNWIND $rows AS r CREATE (n:Movie) SET n = r", rows, BATCH)
    for label, names in tails.items():
        report.nodes += store.write_batches(f"UNWIND $rows AS r CREATE (:{label} {{name: r.name}})",
                                            [{"name": n} for n in sorted(names)], BATCH)
    for (rtype, label), pairs in edges.items():
        report.relationships += store.write_batches(
            f"UNWIND $rows AS r MATCH (m:Movie {{title: r.m}}) MATCH (t:{label} {{name: r.t}}) CREATE (m)-[:{rtype}]->(t)",
            [{"m": m, "t": t} for m, t in pairs], BATCH)


def _counts(store: GraphStore) -> tuple[int, int]:
    row = store.read("MATCH (n) WITH count(n) AS n OPTIONAL MATCH ()-[r]->() RETURN n, count(r) AS r")[0]
    return row["n"], row["r"]
