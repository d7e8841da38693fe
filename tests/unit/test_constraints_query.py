"""SGR's constraints → the conditions Cypher applies (sgr/methods/sgr/constraints.py::query_constraints)."""

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


def test_values_without_a_graph_reading_give_no_condition():
    assert query_constraints([Constraint("comparison", "more than", "more than")], "more than 5 people").empty
    assert query_constraints([Constraint("ordinal", "largest", "largest")], "largest city").empty
    assert query_constraints([Constraint("type", "what kinds", "films")], "q").type_name == "film"
    c = query_constraints([Constraint("comparison", "before", "before")], "who ruled before 1066", second_id="m.x")
    assert (c.year, c.year_op, c.second_id) == (1066, "before", "m.x")
