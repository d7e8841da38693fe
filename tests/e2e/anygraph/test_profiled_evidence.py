"""The evidence of an answer on a user's own graph, against the real Neo4j: the HTML view and saved evidence named by
the profile's naming properties, Browser queries by element id, and the data left as it was once the saved evidence
is cleared. Also: titles written with "/", the profile read once per schema, the encoder not used before a question.

Expected walks come from Cypher written here against the movie graph, never from the code under test.
"""

from __future__ import annotations

import pytest

from tests.e2e.anygraph.test_profiled_graph import gold, movies, snapshot  # noqa: F401 - the fixture

QUESTION = "Who acted with Keanu Reeves?"


def test_html_and_saved_evidence_name_nodes_by_the_profile(movies, tmp_path) -> None:  # noqa: F811
    from sgr.api import ask
    from sgr.evidence import clear_evidence, evidence_subgraph, list_evidence, load_evidence
    from sgr.graph.profile import read_profile

    before, profile = snapshot(movies), read_profile(movies).to_dict()
    keanu = movies.read("MATCH (p:Person {name: 'Keanu Reeves'}) RETURN elementId(p) AS id")[0]["id"]
    films = gold(movies, "MATCH (:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m) RETURN m.title AS a")
    costars = gold(movies, "MATCH (:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->()<-[:ACTED_IN]-(p) "
                           "WHERE p.name <> 'Keanu Reeves' RETURN p.name AS a")
    page = tmp_path / "evidence.html"
    result = ask(QUESTION, store=movies, method="sgr-compiled", save=True, html=page)
    assert set(result.answers) == costars

    graph = evidence_subgraph(movies, result.prediction)
    names = {n.id: n.name for n in graph.nodes}
    assert names[keanu] == "Keanu Reeves" and next(n for n in graph.nodes if n.id == keanu).role == "topic"
    middle = {names[e.target] for e in graph.edges if e.source == keanu}
    assert middle and middle <= films and all(e.in_graph and e.type == "ACTED_IN" for e in graph.edges)
    assert {n.name for n in graph.nodes if n.role == "answer"} <= costars and not graph.missing
    text = page.read_text(encoding="utf-8")
    assert "Keanu Reeves" in text and next(iter(middle)) in text and "4:" in text  # names, and element ids

    saved = load_evidence(movies, result.evidence.question_id)
    assert saved.graph == "property" and keanu in saved.topic_ids()
    assert all(link.name for link in saved.links) and {link.name for link in saved.links} >= {"Keanu Reeves"}
    drawn = movies.read(result.evidence.query)  # the saved question's redraw, by element id
    assert drawn and "elementId" in result.evidence.query and ":Entity" not in result.evidence.query
    assert [q.id for q in list_evidence(movies)] == [saved.id]
    assert read_profile(movies).to_dict() == profile  # the saved question is no label or relationship of the graph

    assert clear_evidence(movies, saved.id) == 1
    after = snapshot(movies)
    assert (after["nodes"], after["rels"]) == (before["nodes"], before["rels"])
    for kind in ("indexes", "constraints"):  # what stays: the uniqueness of saved question ids
        assert set(after[kind]) == set(before[kind]) | {"sgr_question_id"}


def test_unsaved_evidence_is_the_answering_query_and_touches_nothing(movies) -> None:  # noqa: F811
    from sgr.api import ask

    before = snapshot(movies)
    result = ask("Which movies did Tom Hanks act in after 2000?", store=movies, method="sgr-compiled", evidence=True)
    walks = movies.read(result.evidence.query)
    assert walks and result.evidence.question_id is None
    assert snapshot(movies) == before


def test_a_title_written_with_a_slash_links(movies) -> None:  # noqa: F811
    from tests.e2e.anygraph.test_profiled_graph import answer

    expected = gold(movies, "MATCH (m:Movie {title: 'Frost/Nixon'}) RETURN m.released AS a")
    assert set(answer(movies, "What year is Frost/Nixon from?")) == expected
    assert set(answer(movies, "Who directed Frost/Nixon?")) == gold(
        movies, "MATCH (:Movie {title: 'Frost/Nixon'})<-[:DIRECTED]-(p) RETURN p.name AS a")


def test_the_profile_is_read_again_only_when_the_schema_changes(movies) -> None:  # noqa: F811
    from sgr.graph.profile import profile_for

    first = profile_for(movies)
    assert profile_for(movies) is first
    movies.write("CREATE (:Studio {name: 'Silver Pictures'})")
    changed = profile_for(movies)
    assert changed is not first and "Studio" in changed.labels and "Studio" not in first.labels


def test_the_encoder_waits_for_the_first_question(movies, monkeypatch) -> None:  # noqa: F811
    from sgr.methods.sgr.profiled import ProfiledAnswerer
    from sgr.retrieval.keys import KeyAligner

    def refuse(self, texts):  # noqa: ANN001, ANN202
        raise AssertionError("the key vocabulary was embedded before a question")

    monkeypatch.setattr(KeyAligner, "_embed", refuse)
    answerer = ProfiledAnswerer(movies)
    with pytest.raises(AssertionError, match="before a question"):
        answerer.person_label  # noqa: B018 - the first use embeds


def test_cli_html_view(movies, tmp_path) -> None:  # noqa: F811
    from typer.testing import CliRunner

    from cli import app

    page = tmp_path / "matrix.html"
    runner = CliRunner()
    shown = runner.invoke(app, ["ask", "Who directed The Matrix?", "-m", "sgr-compiled", "--html", str(page)])
    assert shown.exit_code == 0, shown.output
    directors = gold(movies, "MATCH (:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p) RETURN p.name AS a")
    text = page.read_text(encoding="utf-8")
    assert all(d in text for d in directors) and "The Matrix" in text


def test_methods_that_read_sgr_own_shape_are_refused_in_one_line(movies) -> None:  # noqa: F811
    from sgr.core.errors import ConfigError
    from sgr.methods.sgr.profiled import check_runs_on

    for method in ("scr", "rcr", "neighbors"):
        with pytest.raises(ConfigError, match=f"^{method} runs on sgr's own :Entity graphs only.*Movie") as err:
            check_runs_on(movies, method)
        assert "\n" not in str(err.value)
    check_runs_on(movies, "sgr-compiled")  # SGR's variants run here
    check_runs_on(movies, "llm-only")
