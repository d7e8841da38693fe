"""A user's own graph against the real Neo4j: Neo4j's movie graph loaded as it is (``sgr load example movies``), its
profile read from the schema, linking by ``title``, literal constraints and orders on properties, and nothing written
to the data beyond the full-text indexes the user allowed.

Expected answers come from Cypher written here against the movie graph, never from the code under test.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli import app
from sgr.core.errors import ConfigError
from sgr.core.types import Question


def snapshot(store) -> dict:
    """Every node and relationship with its labels / type and properties, plus the indexes and constraints."""
    nodes = store.read("MATCH (n) RETURN labels(n) AS l, properties(n) AS p")
    rels = store.read("MATCH (a)-[r]->(b) RETURN type(r) AS t, properties(r) AS p, properties(a) AS a, "
                      "properties(b) AS b")
    indexes = store.read("SHOW INDEXES YIELD name RETURN name")
    constraints = store.read("SHOW CONSTRAINTS YIELD name RETURN name")
    key = lambda rows: sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)  # noqa: E731
    return {"nodes": key(nodes), "rels": key(rels), "indexes": sorted(r["name"] for r in indexes),
            "constraints": sorted(r["name"] for r in constraints)}


@pytest.fixture()
def movies(store):
    """The store holding only the movie graph, without sgr's full-text indexes."""
    from loaders.examples import load_example

    store.clear()
    for row in store.read("SHOW FULLTEXT INDEXES YIELD name WHERE name STARTS WITH 'sgr_name_' RETURN name"):
        store.write(f"DROP INDEX `{row['name']}`")
    report = load_example(store, "movies", index=False)
    assert (report.nodes, report.relationships, report.indexes) == (171, 253, [])
    return store


def gold(store, cypher: str) -> set[str]:
    return {str(r["a"]) for r in store.read(cypher)}


def answer(store, text: str, **kw) -> list[str]:
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method
    from sgr.methods.sgr.profiled import ProfiledAnswerer

    method = create_method(kw.get("method", "sgr-compiled"), MethodContext(store=store, options={}))
    assert isinstance(method, ProfiledAnswerer)
    pred = method.answer(Question(id="q", text=text))
    assert pred.error is None, pred.error
    return pred.answer_texts


def test_the_profile_names_movies_by_title(movies) -> None:
    from sgr.graph.profile import read_profile

    profile = read_profile(movies)
    assert not profile.is_entity_shape
    assert profile.name_of("Movie") == "title" and profile.name_of("Person") == "name"
    assert profile.labels["Movie"].numeric() == ["released"]
    rels = {(r.type, r.start, r.end): r.properties for r in profile.relationships}
    assert rels[("REVIEWED", "Person", "Movie")] == {"summary": "String", "rating": "Long"}
    assert rels[("ACTED_IN", "Person", "Movie")] == {"roles": "StringArray"}
    assert ("FOLLOWS", "Person", "Person") in rels and len(rels) == 6


def test_linking_by_title_with_and_without_a_full_text_index(movies) -> None:
    from sgr.graph.profile import create_name_indexes, read_profile
    from sgr.retrieval.entities import ProfileLinker

    profile = read_profile(movies)
    question = "Who directed the matrix and when harry met sally?"
    expected = {r["t"] for r in movies.read("MATCH (m:Movie) WHERE m.title IN ['The Matrix', 'When Harry Met Sally'] "
                                             "RETURN m.title AS t")}
    scanned = ProfileLinker(movies, profile).link_question(question)
    assert {e.name for e in scanned} == expected and all(e.labels == ["Movie"] for e in scanned)
    assert create_name_indexes(movies, profile, consent=True) == ["sgr_name_person_name", "sgr_name_movie_title"]
    indexed = ProfileLinker(movies, profile)
    assert indexed.indexes[("Movie", "title")] == "sgr_name_movie_title"
    assert {e.name for e in indexed.link_question(question)} == expected
    assert [e.name for e in indexed.link_question("What did Tom Hanks's co-stars act in?")] == ["Tom Hanks"]


def test_a_literal_constraint_acts_on_the_property(movies) -> None:
    after = answer(movies, "Which movies did Tom Hanks act in after 2000?")
    expected = gold(movies, "MATCH (:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m) WHERE m.released > 2000 "
                            "RETURN m.title AS a")
    assert set(after) == expected and len(expected) >= 2
    everything = gold(movies, "MATCH (:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m) RETURN m.title AS a")
    assert set(answer(movies, "Which movies did Tom Hanks act in?")) == everything > expected
    born = answer(movies, "Which actors in The Matrix were born before 1965?")
    assert set(born) == gold(movies, "MATCH (p)-[:ACTED_IN]->(:Movie {title: 'The Matrix'}) WHERE p.born < 1965 "
                                     "RETURN p.name AS a")


def test_ordering_by_a_relationship_property_counts_and_lookups(movies) -> None:
    top = answer(movies, "Which movie did Jessica Thompson rate highest?")
    assert top == [r["a"] for r in movies.read("MATCH (:Person {name: 'Jessica Thompson'})-[r:REVIEWED]->(m) "
                                               "RETURN m.title AS a ORDER BY r.rating DESC LIMIT 1")]
    n = movies.read("MATCH (:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m) RETURN count(m) AS n")[0]["n"]
    assert answer(movies, "How many movies did Keanu Reeves act in?") == [str(n)]
    assert answer(movies, "When was Cloud Atlas released?") == [str(movies.read(
        "MATCH (m:Movie {title: 'Cloud Atlas'}) RETURN m.released AS y")[0]["y"])]


def test_sgr_writes_nothing_but_the_indexes_it_was_allowed(movies) -> None:
    from sgr.api import ask, graph_profile

    before = snapshot(movies)
    graph_profile(store=movies)
    for text in ("Who directed The Matrix?", "Who acted with Keanu Reeves?", "How many movies did Tom Hanks act in?"):
        result = ask(text, store=movies, method="sgr-compiled")
        assert result.answers and "MATCH p = " in result.evidence.query
    with pytest.raises(ConfigError, match="--yes"):
        graph_profile(store=movies, index=False)
    assert snapshot(movies) == before
    made = graph_profile(store=movies, index=True).created
    after = snapshot(movies)
    assert sorted(made) == ["sgr_name_movie_title", "sgr_name_person_name"]
    assert after["indexes"] == sorted(before["indexes"] + made)
    assert {k: v for k, v in after.items() if k != "indexes"} == {k: v for k, v in before.items() if k != "indexes"}


def test_an_edited_profile_file_is_what_sgr_reads(movies, tmp_path, monkeypatch) -> None:
    from sgr.api import graph_profile
    from sgr.retrieval.entities import ProfileLinker

    path = tmp_path / "profile.json"
    profile = graph_profile(store=movies, out=path)
    data = json.loads(path.read_text())
    data["labels"]["Movie"]["name_property"] = "tagline"  # the user says taglines name movies
    path.write_text(json.dumps(data))
    monkeypatch.setenv("SGR_PROFILE", str(path))
    edited = graph_profile(store=movies)
    assert edited.name_of("Movie") == "tagline" and profile.name_of("Movie") == "title"
    linked = ProfileLinker(movies, edited).link_question("Who acted in Welcome to the Real World?")
    assert [e.name for e in linked] == ["Welcome to the Real World"]


def test_cli_loads_the_example_once_and_asks_before_indexing(store) -> None:
    store.clear()
    runner = CliRunner()
    first = runner.invoke(app, ["load", "example", "movies", "--no-index"])
    assert first.exit_code == 0, first.output
    assert "171 nodes and 253 relationships created" in first.stdout and "neo4j-browser" in first.stdout
    again = runner.invoke(app, ["load", "example", "movies", "--no-index"])
    assert again.exit_code == 0 and "already loaded: nothing added" in again.stdout
    assert store.read("MATCH (n) RETURN count(n) AS n")[0]["n"] == 171
    refused = runner.invoke(app, ["profile", "index"])
    assert refused.exit_code == 2 and "--yes" in refused.output
    shown = runner.invoke(app, ["profile", "show"])
    assert json.loads(shown.stdout)["labels"]["Movie"]["name_property"] == "title"
    unknown = runner.invoke(app, ["load", "example", "northwind"])
    assert unknown.exit_code == 2 and "unknown example 'northwind'" in unknown.output


def test_sgr_own_graphs_keep_the_sgr_answerer(clean_store, tmp_path) -> None:
    from sgr.api import load
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method
    from sgr.methods.sgr.answerer import SGRAnswerer

    triples = tmp_path / "kb.txt"
    triples.write_text("The Matrix|directed_by|Lana Wachowski\nThe Matrix|release_year|1999\n")
    load([triples], store=clean_store, format="triples")
    method = create_method("sgr-compiled", MethodContext(store=clean_store, options={}))
    assert isinstance(method, SGRAnswerer)
    with pytest.raises(ConfigError, match="sgr's own :Entity graph"):
        from loaders.examples import load_example

        load_example(clean_store, "movies")


def test_metaqa_as_a_property_graph(store, tmp_path) -> None:
    from loaders.examples import load_example

    kb = tmp_path / "kb.txt"
    kb.write_text("Kismet|directed_by|William Dieterle\nKismet|release_year|1955\nKismet|release_year|1944\n"
                  "Kismet|starred_actors|Marlene Dietrich\nKismet|has_genre|Drama\nKismet|has_imdb_rating|good\n"
                  "Dr. Socrates|directed_by|William Dieterle\nDr. Socrates|release_year|1935\n"
                  "Dr. Socrates|starred_actors|Paul Muni\nDr. Socrates|starred_actors|Paul Muni\n")
    store.clear()
    report = load_example(store, "metaqa", path=kb)
    assert (report.nodes, report.relationships) == (2 + 3 + 1, 5)  # a repeated line is one relationship
    assert store.read("MATCH (m:Movie {title: 'Kismet'}) RETURN m.release_year AS y, m.imdb_rating AS r")[0] == \
        {"y": 1944, "r": "good"}  # several years: the earliest
    assert set(answer(store, "what films did [William Dieterle] direct")) == {"Kismet", "Dr. Socrates"}
    assert answer(store, "when were the movies starred by [Paul Muni] released") == ["1935"]
    assert answer(store, "the director of [Kismet] is also the director of which movies") == ["Dr. Socrates"]
    with pytest.raises(ConfigError, match="empty database"):
        load_example(store, "metaqa", path=kb)
