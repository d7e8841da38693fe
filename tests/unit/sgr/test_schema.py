"""Schema extraction S_q: rule constraints, score combination, the constrained LLM stage (sgr/methods/sgr/schema.py)."""

import pytest
from pydantic import ValidationError

from sgr.methods.sgr.schema import (QuestionSchema, ScoredRelation, combine_scores, extract_schema, reply_model,
                                   rule_constraints)


class FixedRetriever:
    """A retriever over a fixed ranking (names must exist in the graph in real use)."""

    def __init__(self, ranking):
        self.ranking = ranking

    def retrieve(self, question, k, among=None):
        names = [n for n in self.ranking if among is None or n in among]
        return [ScoredRelation(n, 0.9 - 0.1 * i, n, 0.9 - 0.1 * i) for i, n in enumerate(names[:k])]


def test_rule_constraints_find_type_time_ordinal_count():
    kinds = {(c.kind, c.value) for c in rule_constraints("who was the first governor of ohio in 1803?")}
    assert ("type", "person") in kinds and ("time", "1803") in kinds and ("ordinal", "first") in kinds
    assert any(c.kind == "count" for c in rule_constraints("how many countries border france"))
    assert ("type", "language") in {(c.kind, c.value) for c in rule_constraints("what language do they speak")}
    assert any(c.kind == "count" for c in rule_constraints("what is the number of countries in europe"))


def test_the_largest_number_of_ranks_answers_it_does_not_count_them():
    for q in ("which school he attended has the largest number of undergraduates?",
              "which university he attended has number of smallest postgraduates?"):
        kinds = [c.kind for c in rule_constraints(q)]
        assert "count" not in kinds and "ordinal" in kinds, q


def test_greatest_and_fewest_ask_for_a_ranking():
    for q, word in (("which venue does X play at that has the greatest occupancy capacity?", "greatest"),
                    ("which of the schools X attended is the university with the fewest postgraduates?", "fewest")):
        assert ("ordinal", word) in {(c.kind, c.value) for c in rule_constraints(q)}


def test_constraint_words_inside_entity_names_are_not_constraints():
    q = "what type of film is The Count of Monte Cristo"
    assert any(c.kind == "count" for c in rule_constraints(q))  # read naively, the title asks for a count
    schema = extract_schema(q, retriever=FixedRetriever(["has_genre"]), entity="The Count of Monte Cristo")
    assert {c.kind for c in schema.constraints} == {"type"}
    assert QuestionSchema(q, mentions=["The Count of Monte Cristo"]).cue_text == "what type of film is X"
    bracketed = extract_schema("who directed [The Last Stand] before 1990", retriever=FixedRetriever(["directed_by"]))
    kinds = {(c.kind, c.value) for c in bracketed.constraints}
    assert ("comparison", "before") in kinds and ("time", "1990") in kinds and not any(k == "ordinal" for k, _ in kinds)


def test_llm_pick_reorders_relations():
    cands = [ScoredRelation("a", 0.8, "", 0.8), ScoredRelation("b", 0.4, "", 0.4)]
    out = combine_scores(cands, ["b"], beta=0.5)
    assert [r.name for r in out] == ["b", "a"]
    assert out[0].score == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert out[1].score == pytest.approx(0.5 * 1.0)
    assert out[0].picked_rank == 1 and out[1].picked_rank is None


def test_reply_model_only_admits_candidate_numbers():
    model = reply_model(2, max_relations=2, with_entities=False)
    assert model.model_validate({"relations": [2, 1]}).relations == [2, 1]
    with pytest.raises(ValidationError):
        model.model_validate({"relations": [3]})
    with pytest.raises(ValidationError):
        model.model_validate({"relations": [1, 2, 1]})
    schema = model.model_json_schema()
    assert schema["properties"]["relations"]["items"]["enum"] == [1, 2]


def test_extract_schema_with_scripted_model(scripted):
    llm = scripted('{"relations": [2]}')
    retr = FixedRetriever(["people.person.nationality", "people.person.place_of_birth", "people.person.gender"])
    s = extract_schema("where was george washington carver from?", retriever=retr, llm=llm,
                       entity="George Washington Carver", k=3)
    assert s.source == "llm"
    assert s.ordered == ["people.person.place_of_birth"]
    assert s.relation_names[0] == "people.person.place_of_birth"
    assert any(c.kind == "type" and c.value == "place" for c in s.constraints)


def test_unusable_reply_falls_back_to_embedding_ranking(scripted):
    llm = scripted("not json", '{"relations": [7]}')
    retr = FixedRetriever(["x.y", "z.w"])
    s = extract_schema("what is x?", retriever=retr, llm=llm, entity="X", k=2)
    assert s.source == "embedding" and s.relation_names == ["x.y", "z.w"] and s.ordered == []


class OnePool:
    def __init__(self, exemplars):
        self.exemplars = exemplars

    def __len__(self):
        return len(self.exemplars)

    def nearest(self, question, k, entity=None):
        return [(e, 1.0) for e in self.exemplars][:k]


def test_worked_example_uses_the_questions_candidates():
    from sgr.methods.sgr.exemplars import Exemplar
    from sgr.methods.sgr.schema import examples_for, schema_messages

    pool = OnePool([Exemplar("who wrote X", ["not.listed"]), Exemplar("who directed Y", ["directed_by"], "Y")])
    ex = examples_for("who directed Z", "Z", ["written_by", "directed_by"], pool, 1)
    assert ex == [{"question": "who directed Y", "entity": "Y", "candidates": ["written_by", "directed_by"],
                   "relations": ["directed_by"]}]
    msgs = schema_messages("who directed Z", "Z", ["written_by", "directed_by"], ex, False)
    assert [type(m).__name__ for m in msgs] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert "who directed Y" in msgs[1].content and msgs[2].content == '{"relations": [2]}'
    assert "who directed Z" in msgs[3].content


def test_schema_prompt_puts_worked_examples_before_the_question() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from sgr.methods.sgr.prompts import (SCHEMA_SYSTEM, WorkedExample, parse_schema_reply, schema_prompt,
                                         schema_target, schema_user)

    ex = WorkedExample("who directed the films that X starred in", ("X",),
                       schema_target([["starred_actors", "directed_by"]]))
    msgs = schema_prompt("which films did Y write", ["Y"], [ex])
    assert [type(m) for m in msgs] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert msgs[0].content == SCHEMA_SYSTEM and msgs[-1].content == schema_user("which films did Y write", ["Y"])
    assert parse_schema_reply(msgs[2].content)[0] == [("starred_actors", "directed_by")]
    assert schema_prompt("which films did Y write", ["Y"]) == [msgs[0], msgs[-1]]  # zero-shot: what tuning sees


def test_asks_for_others_reads_the_words_that_ask_for_the_others_around_a_node():
    from sgr.core.lexicon import asks_for_others

    assert asks_for_others("which films share a director with X") and asks_for_others("who co-starred in X")
    assert asks_for_others("what other movies did X direct")
    assert not asks_for_others("what currency is used in germany?") and not asks_for_others("Who cooked X")
    assert not asks_for_others("What stadium does the team with the mascot called Bernie Brewer play in?")
    assert asks_for_others("which actors acted together with X") and asks_for_others("who starred in X with Y as co-star")
