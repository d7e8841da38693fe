"""SGR's constraints → the conditions Cypher applies (sgr/methods/sgr/constraints.py::query_constraints)."""

from sgr.core.lexicon import EARLIEST, LATEST
from sgr.methods.sgr.constraints import query_constraints
from sgr.methods.sgr.schema import Constraint, rule_constraints


def qc(question, **kw):
    return query_constraints(rule_constraints(question), question, **kw)


def test_rules_become_conditions():
    c = qc("who was the first governor of ohio in 1803?")
    assert (c.type_name, c.year, c.year_op, c.ordinal, c.count) == ("person", 1803, "in", "earliest", False)
    c = qc("what university did she attend after 1990?")
    assert (c.type_name, c.year, c.year_op) == ("university", 1990, "after")
    assert qc("where did he live before 2001").year_op == "before" and qc("where did he live").type_name == "location"
    assert qc("how many countries border france").count
    assert not qc("how many countries border france", count=False).count
    assert qc("when did he die").empty  # the time type has no condition
    assert qc("who is the latest president").ordinal == "latest"
    for q in ("who is the governor of ohio now?", "who is the leader of north korea today?",
              "who is the current coach of the bears?", "what team does he currently play for?"):
        assert qc(q).ordinal == "latest", q
    assert qc("who was the governor of ohio?").ordinal is None
    for word in EARLIEST | LATEST:  # every word of the two sets is one the rule finds
        assert qc(f"who is the {word} one here").ordinal == ("earliest" if word in EARLIEST else "latest"), word


def test_values_without_a_graph_reading_give_no_condition():
    assert query_constraints([Constraint("comparison", "more than", "more than")], "more than 5 things").empty
    assert query_constraints([Constraint("ordinal", "best", "best")], "best film").empty
    assert query_constraints([Constraint("type", "what kinds", "films")], "q").type_name == "film"
    assert query_constraints([Constraint("type", "what", "cities")], "q").type_name == "city"
    assert query_constraints([Constraint("type", "what", "class")], "q").type_name == "class"


def test_numbers_superlatives_and_their_measures():
    c = qc("what is the largest city in spain?")
    assert (c.extreme, c.measure, c.number, c.kinds) == ("max", "area|population", None, ["ordinal"])
    c = qc("what is the most populated state in the united states?")
    assert (c.extreme, c.measure) == ("max", "population")
    assert (qc("what is the tallest building in paris").extreme, qc("the shortest river").extreme) == ("max", "min")
    c = qc("which cities have more than 2.5 million people?")
    assert (c.number, c.number_op, c.measure, c.extreme) == (2.5e6, ">", "population", None)
    assert (qc("mountains at most 3,000 feet high").number, qc("mountains at most 3,000 feet").number_op) == (3000, "<=")
    assert "comparison" in qc("towns with fewer than 900 inhabitants").kinds
    assert qc("who is the youngest child of ann").ordinal == "latest"  # a date ordinal, not a number
    c = qc("the largest city with over 2 million people")  # one measure per query: the superlative's
    assert (c.extreme, c.number, c.measure) == ("max", None, "area|population")
    c = query_constraints([Constraint("comparison", "before", "before")], "who ruled before 1066", join_ids=["m.x"])
    assert (c.year, c.year_op, c.join_ids) == (1066, "before", ("m.x",))
