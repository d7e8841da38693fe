"""``sgr load example movies`` reads the movie graph's Cypher out of the vendored Neo4j Browser's app bundle."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from loaders.examples import MOVIES_START, movies_cypher
from sgr.core.errors import LoadError

CYPHER = ("CREATE (TheMatrix:Movie {title:'The Matrix', released:1999, tagline:\"Welcome\"})\n"
          "CREATE (Keanu:Person {name:'Keanu Reeves', born:1964})\n"
          "CREATE (Keanu)-[:ACTED_IN {roles:['Neo']}]->(TheMatrix)\n\n"
          "WITH TomH as a\nMATCH (a)-[:ACTED_IN]->(m)<-[:DIRECTED]-(d) RETURN a,m,d LIMIT 10;")


def bundle(tmp_path: Path, script: str) -> Path:
    jar = tmp_path / "neo4j-browser-0.0.0.jar"
    with zipfile.ZipFile(jar, "w") as zf:
        zf.writestr("browser/index.html", "<html></html>")
        zf.writestr("browser/vendor.js", "var x = 1;")
        zf.writestr("browser/app-123.js", script)
    return jar


def test_the_statement_is_read_from_the_bundle_without_the_guide_query(tmp_path: Path) -> None:
    js = 'a.createElement("pre",{className:"code"},' + json.dumps(CYPHER) + "),b()"
    cypher, source = movies_cypher(bundle(tmp_path, js))
    assert cypher.startswith(MOVIES_START) and cypher.endswith("->(TheMatrix)")
    assert 'tagline:"Welcome"' in cypher and "WITH TomH" not in cypher
    assert source == "neo4j-browser-0.0.0.jar!browser/app-123.js"


def test_a_bundle_without_the_guide_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="holds no movie graph guide"):
        movies_cypher(bundle(tmp_path, "var nothing = 'here';"))


def test_the_vendored_browser_holds_the_movie_graph() -> None:
    from sgr.core.config import java_dir

    jars = sorted((java_dir() / "target" / "browser").glob("neo4j-browser-*.jar"))
    if not jars:
        pytest.skip("the neo4j-browser jar is not built (scripts/setup.sh builds it)")
    cypher, _ = movies_cypher(jars[-1])
    assert cypher.count("CREATE (") >= 150 and ":REVIEWED {summary:" in cypher and "FOLLOWS" in cypher
