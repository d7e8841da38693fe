"""The profiled route's decision terms and prompt (no Neo4j): the compiled plan's answers against the model's."""

from __future__ import annotations

from cypher.translate import profile_messages
from sgr.core.types import Answer
from sgr.graph.profile import GraphProfile, LabelProfile, RelationshipProfile
from sgr.methods.sgr.config import SGRConfig
from sgr.methods.sgr.decision import DecisionParams, decide
from sgr.methods.sgr.grounding import row_values
from sgr.methods.sgr.profiled_model import decision_inputs

PARAMS = DecisionParams.from_config(SGRConfig())


def answers(*names: str) -> list[Answer]:
    return [Answer(n, f"id-{n}", 1.0) for n in names]


def test_a_compiled_answer_is_kept_and_the_models_agreement_ranks_it_first() -> None:
    inputs = decision_inputs(answers("Lana", "Lilly"), ("DIRECTED",), answers("Keanu", "Lilly"), ("ACTED_IN",), 0.5)
    assert [c.gamma for c in inputs.candidates] == [1.0, 1.0, 0.0, 1.0]
    d = decide(inputs, PARAMS)
    assert d.stage == "compiled" and [a.text for a in d.answers] == ["Lilly", "Lana"]


def test_the_models_answers_win_the_vote_when_no_plan_found_rows() -> None:
    d = decide(decision_inputs([], (), answers("Lana", "Lilly"), ("DIRECTED",), 0.5), PARAMS)
    assert not any(d.valid)  # no plan's walk reaches them: γ 0
    assert d.stage == "vote" and d.route_source == "model" and {a.text for a in d.answers} == {"Lana", "Lilly"}


def test_the_prompt_puts_the_questions_labels_and_keys_first() -> None:
    profile = GraphProfile("property", {
        "Person": LabelProfile("Person", "name", {"born": "Long", "name": "String"}),
        "Movie": LabelProfile("Movie", "title", {"released": "Long", "title": "String"})},
        [RelationshipProfile("ACTED_IN", "Person", "Movie", {"roles": "StringArray"}),
         RelationshipProfile("DIRECTED", "Person", "Movie")])
    lines = profile.schema_lines(["Movie"], ["DIRECTED"])
    assert lines == ["(:Movie {title: String, released: Long})", "(:Person {name: String, born: Long})",
                     "(:Person)-[:DIRECTED]->(:Movie)", "(:Person)-[:ACTED_IN {roles: StringArray}]->(:Movie)"]
    last = profile_messages("who directed X?", lines, ['(:Movie {title: "X"})'])[-1].content
    assert last.splitlines() == ["Schema:", *lines, "Named nodes:", '(:Movie {title: "X"})',
                                 "Question: who directed X?"]


def test_a_node_is_named_by_the_profiles_naming_property() -> None:
    rows = [{"m": {"title": "The Matrix", "released": 1999}}, {"m": {"name": "Keanu"}}, {"m": 1999}]
    assert row_values(rows, ["name", "title"]) == [(None, "The Matrix"), (None, "Keanu"), (None, "1999")]
    assert row_values(rows) == [(None, "Keanu"), (None, "1999")]  # sgr's shape: names only
