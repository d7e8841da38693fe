"""C_q acting on answers from graph facts (sgr/methods/sgr/constraints.py), on a hand-built graph: each kind
changes an answer."""

import pytest

from sgr.core.types import Answer, ReasoningPath
from sgr.methods.sgr.constraints import apply_constraints
from sgr.methods.sgr.schema import Constraint

pytestmark = pytest.mark.neo4j

REPS = "government.political_district.representatives"
HOLDER = "government.government_position_held.office_holder"
FROM = "government.government_position_held.from"
TO = "government.government_position_held.to"


@pytest.fixture()
def ohio(clean_store):
    """Ohio's governors through CVTs: Strickland 2007–2011 (dates as CVT properties), Kasich 2011–2019 (as
    sibling nodes), Taft 1999–2007; types stored on the people and on one university."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.ohio", "Ohio")
    for cvt, person, name in [("m.c1", "m.ted", "Ted Strickland"), ("m.c2", "m.john", "John Kasich"),
                              ("m.c3", "m.bob", "Bob Taft")]:
        b.add_entity(person, name)
        b.add_triple("m.ohio", REPS, cvt)
        b.add_triple(cvt, HOLDER, person)
        for type_ in ("people.person", "government.politician"):
            b.add_type(person, type_)
    b.add_property("m.c1", FROM, "2007-01-08")
    b.add_property("m.c1", TO, "2011-01-10")
    b.add_entity("d.2011", "2011-01-10")
    b.add_entity("d.2019", "2019-01-14")
    b.add_triple("m.c2", FROM, "d.2011")
    b.add_triple("m.c2", TO, "d.2019")
    b.add_property("m.c3", FROM, "1999-01-11")
    b.add_property("m.c3", TO, "2007-01-08")
    b.add_entity("m.osu", "Ohio State")
    b.add_triple("m.ohio", "location.location.contains", "m.osu")
    b.add_type("m.osu", "education.university")
    write_graph(clean_store, b)
    return clean_store


def answers():
    out = []
    for cvt, pid, name in [("m.c1", "m.ted", "Ted Strickland"), ("m.c2", "m.john", "John Kasich"),
                           ("m.c3", "m.bob", "Bob Taft")]:
        p = ReasoningPath(nodes=["m.ohio", cvt, pid], relations=[REPS, HOLDER], names=["Ohio", None, name])
        out.append(Answer(text=name, id=pid, paths=[p]))
    return out


def texts(ans):
    return [a.text for a in ans]


def test_time_filters_on_cvt_properties_and_sibling_dates(ohio):
    got, notes = apply_constraints(ohio, answers(), [Constraint("time", "2015", "2015")], "governor of ohio 2015")
    assert texts(got) == ["John Kasich"] and notes  # dates of Kasich's CVT are sibling nodes
    got, _ = apply_constraints(ohio, answers(), [Constraint("time", "2009", "2009")], "governor of ohio 2009")
    assert texts(got) == ["Ted Strickland"]  # Strickland's dates are CVT properties


def test_ordinal_picks_by_start_date(ohio):
    got, _ = apply_constraints(ohio, answers(), [Constraint("ordinal", "first", "first")], "first governor")
    assert texts(got) == ["Bob Taft"]
    got, _ = apply_constraints(ohio, answers(), [Constraint("ordinal", "latest", "latest")], "latest governor")
    assert texts(got) == ["John Kasich"]


def test_comparison_against_the_questions_year(ohio):
    got, _ = apply_constraints(ohio, answers(), [Constraint("comparison", "before", "before")],
                               "who was governor of ohio before 2007?")
    assert texts(got) == ["Bob Taft"]


def test_count_answers_with_the_number(ohio):
    got, _ = apply_constraints(ohio, answers(), [Constraint("count", "how many", None)], "how many governors")
    assert texts(got) == ["3"] and len(got[0].paths) == 3


def test_type_filters_on_stored_types(ohio):
    mixed = answers()[:1] + [Answer(text="Ohio State", id="m.osu", paths=[ReasoningPath(
        nodes=["m.ohio", "m.osu"], relations=["location.location.contains"], names=["Ohio", "Ohio State"])])]
    got, notes = apply_constraints(ohio, mixed, [Constraint("type", "what university", "university")],
                                   "what university is in ohio")
    assert texts(got) == ["Ohio State"] and notes[0].startswith("type")


def test_type_names_a_whole_word_without_stored_types(clean_store):
    """Without stored types the type word must be a whole word of the name: "states" in "United States of America"
    is no state (it was kept as one: "what state is saint louis university in?" → United States of America);
    "College," and the alike word "University" count."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    names = {"m.x": "X", "m.usa": "United States of America", "m.bav": "Free State of Bavaria",
             "m.exe": "Exeter College, Oxford", "m.uzh": "University of Zurich", "m.col": "Colleges of Rome"}
    for key, name in names.items():
        b.add_entity(key, name)
        if key != "m.x":
            b.add_triple("m.x", "location.location.containedby", key)
    write_graph(clean_store, b)

    def ask(keys, word):
        cands = [Answer(text=names[k], id=k, paths=[ReasoningPath(nodes=["m.x", k], relations=[
            "location.location.containedby"], names=["X", names[k]])]) for k in keys]
        got, _ = apply_constraints(clean_store, cands, [Constraint("type", f"what {word}", word)],
                                   f"what {word} is x in")
        return texts(got)

    assert ask(["m.usa", "m.bav"], "state") == ["Free State of Bavaria"]
    assert ask(["m.col", "m.exe", "m.uzh"], "college") == ["Exeter College, Oxford", "University of Zurich"]


def test_no_facts_no_change(ohio):
    plain = [Answer(text="A", id="m.ohio"), Answer(text="B", id="m.osu")]
    got, notes = apply_constraints(ohio, plain, [Constraint("time", "2015", "2015")], "q 2015")
    assert texts(got) == ["A", "B"] and not notes


@pytest.fixture()
def governors(clean_store):
    """Ohio -[REPS]-> (CVT {from, to}) -[HOLDER]-> governor, three terms; dates are CVT literal properties."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.ohio", "Ohio")
    for cvt, person, name, start, end in [("m.c1", "m.ted", "Ted Strickland", "2007-01-08", "2011-01-10"),
                                          ("m.c2", "m.john", "John Kasich", "2011-01-10", "2019-01-14"),
                                          ("m.c3", "m.bob", "Bob Taft", "1999-01-11", "2007-01-08")]:
        b.add_entity(person, name)
        b.add_triple("m.ohio", REPS, cvt)
        b.add_triple(cvt, HOLDER, person)
        b.add_property(cvt, FROM, start)
        b.add_property(cvt, TO, end)
    b.add_entity("m.us", "United States")
    b.add_triple("m.ohio", "location.location.containedby", "m.us")
    write_graph(clean_store, b)
    return clean_store


def test_a_cvt_two_relation_question_answered_end_to_end_with_its_year(governors):
    from sgr.core.types import Question
    from tests.helpers import compiled_run

    q = Question(id="q", text="who was the governor of ohio in 2015?", topic_entities=["Ohio"])
    res = compiled_run(governors, q, hops=1)
    assert res.subgraph.schema_paths[0].relations == [REPS, HOLDER]  # one hop through the CVT
    assert "`" + REPS + "`" in res.prediction.cypher[0] and "`" + HOLDER + "`" in res.prediction.cypher[0]
    assert res.prediction.answer_texts == ["John Kasich"], res.prediction.extra
    assert res.prediction.answers[0].paths[0].nodes == ["m.ohio", "m.c2", "m.john"]
    off = compiled_run(governors, q, hops=1, answer_constraints=False)
    assert set(off.prediction.answer_texts) == {"Ted Strickland", "John Kasich", "Bob Taft"}
