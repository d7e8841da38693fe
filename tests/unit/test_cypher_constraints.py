"""C_q as Cypher text: the compiled query and the NL→Cypher grammar (cypher/conditions.py, compile.py, grammar.py,
translate.py). Running them is tested in tests/e2e/sgr/test_constraints_cypher.py."""

import re

import pytest

from cypher.compile import compile_schema_path, compile_walk_filter
from cypher.conditions import QueryConstraints, date_key, year_condition
from cypher.grammar import cypher_grammar, longest_query, token_budget
from cypher.translate import grammar_for

STEPS = [("people.person.spouse_s", "out"), ("people.marriage.spouse", "out")]
PLAIN = ("MATCH p = (s:Entity {id: $seed})-[:`people.person.spouse_s`]->(n1:Entity)-[:`people.marriage.spouse`]->"
         "(x:Entity)\nWHERE x.id <> $seed AND NOT x:CVT\nWITH x, collect(p)[..$per] AS ps\n"
         "RETURN x.id AS id, x.name AS name, [q IN ps | [n IN nodes(q) | n.id]] AS path_ids, "
         "[q IN ps | [n IN nodes(q) | n.name]] AS path_names, [q IN ps | [_i IN range(0, size(relationships(q)) - 1) | "
         "[type(relationships(q)[_i]), startNode(relationships(q)[_i]) = nodes(q)[_i]]]] AS path_steps\n"
         "ORDER BY coalesce(x.name, x.id)\nLIMIT $limit")


def test_without_constraints_the_query_is_the_plain_walk():
    assert compile_schema_path("m.ann", STEPS).cypher == PLAIN
    assert compile_schema_path("m.ann", STEPS, constraints=QueryConstraints()).cypher == PLAIN


def test_each_condition_appears_only_when_asked():
    def text(**kw):
        return compile_schema_path("m.ann", STEPS, constraints=QueryConstraints(**kw)).cypher

    assert "toLower(_t) CONTAINS \"university\"" in text(type_name="university")
    assert 'b(university|college)' in text(type_name="university")  # the name test: a whole word of the name
    assert "(?s)" not in text(type_name="person")  # generic words act through stored types only
    assert '<= "1990"' in text(year=1990) and "reduce(" not in text(year=1990)
    assert '< "1990"' in text(year=1990, year_op="before") and '> "1990"' in text(year=1990, year_op="after")
    assert "min(reduce(_a = \"9999\"" in text(ordinal="earliest")
    assert "max(reduce(_a = \"0000\"" in text(ordinal="latest")
    counted = text(count=True)
    assert "count(DISTINCT x)" in counted and counted.rstrip().endswith("AS path_steps")
    joined = compile_schema_path("m.ann", STEPS, constraints=QueryConstraints(join_ids=("m.paris",)))
    assert joined.params["join0"] == "m.paris" and "(_x)--(:CVT)--(_s:Entity {id: $join0})" in joined.cypher
    both = compile_schema_path("m.ann", STEPS, constraints=QueryConstraints(join_ids=("m.paris", "m.rome")))
    assert both.params["join1"] == "m.rome" and both.cypher.count("_s:Entity {id: $join") == 4  # each entity joins
    for t in (text(year=1990), counted, joined.cypher):
        assert "$seed" in t and "WITH x, nodes(p) AS ns" in t


def test_walk_filter_carries_the_walks_as_parameters():
    q = compile_walk_filter([("m.bob", ["m.ann", "m.w1", "m.bob"]), ("m.x", [])], QueryConstraints(year=1990))
    assert q.params["walks"] == [{"id": "m.bob", "nodes": ["m.ann", "m.w1", "m.bob"]}, {"id": "m.x", "nodes": ["m.x"]}]
    assert q.cypher.startswith("UNWIND $walks AS wk") and "$seed" not in q.cypher


def test_bad_constraint_values_are_refused():
    with pytest.raises(ValueError, match="year_op"):
        QueryConstraints(year=1990, year_op="during")
    with pytest.raises(ValueError, match="ordinal"):
        QueryConstraints(ordinal="second")
    with pytest.raises(ValueError, match="one word"):
        QueryConstraints(type_name='x") OR true //')
    with pytest.raises(ValueError, match="year_op"):
        year_condition(1990, "during", "[x]")
    with pytest.raises(ValueError, match="ordinal"):
        date_key("middle", "[x]")
    assert QueryConstraints().empty and not QueryConstraints(count=True).empty
    assert QueryConstraints(type_name="person", year=1990, year_op="before", ordinal="latest").kinds == [
        "type", "comparison", "ordinal"]


RELS = ["people.person.spouse_s", "people.marriage.spouse"]


def rule(grammar, name):
    return next(line for line in grammar.splitlines() if line.startswith(f"{name} ::="))


def test_grammar_without_constraints_has_no_free_strings():
    g = cypher_grammar(RELS, ["Ann"], max_hops=2)
    assert "char" not in g and "string" not in g and "ORDER BY" not in g
    assert rule(g, "cond2") == 'cond2 ::= "x <> e"'
    assert "path2 ::=" in g and "path3 ::=" not in g


def test_grammar_offers_exactly_the_constraints_conditions():
    qc = QueryConstraints(type_name="university", year=1990, ordinal="latest", second_name="Paris")
    g = cypher_grammar(RELS, ["Ann", "Paris"], max_hops=2, constraints=qc)
    cond = rule(g, "cond2")
    assert cond.count('" | "') == 3  # x <> e, the name test, the year, the second entity (no types stored)
    assert "[x1, x]" in cond and '\\"1990\\"' in cond and 'name: \\"Paris\\"' in cond
    assert "coalesce(x.types" not in cond
    assert "coalesce(x.types" in rule(cypher_grammar(RELS, ["Ann"], 2, qc, has_types=True), "cond2")
    assert "ORDER BY" in rule(g, "ret2") and "DESC LIMIT 1" in rule(g, "ret2") and "[x]" in rule(g, "ret1")
    assert re.search(r'\(" AND " cond2\)\{0,3\}', g)
    assert "count(" not in g  # counts are taken over validated answers, not written by the model


def test_a_cvt_hop_takes_two_relationships_over_cvt_relations_only():
    g = grammar_for(RELS + ["people.person.place_of_birth"], ["Ann"], 1, cvt_relations=RELS)
    assert rule(g, "path1") == 'path1 ::= "(e:Entity {name: " entity "})" rel "(x:Entity)"'
    assert rule(g, "path2") == 'path2 ::= "(e:Entity {name: " entity "})" crel "(c1:CVT)" crel "(x:Entity)"'
    assert "path3 ::=" not in g
    assert re.findall(r"`([^`]+)`", rule(g, "ctype")) == RELS
    assert "people.person.place_of_birth" in rule(g, "type")
    g2 = grammar_for(RELS, ["Ann"], 2, cvt_relations=RELS)
    assert sum(line.startswith("path") for line in g2.splitlines()) == 6  # 2 one-hop shapes, 4 two-hop shapes
    assert "crel" not in grammar_for(RELS, ["Ann"], 2) and "path3 ::=" not in grammar_for(RELS, ["Ann"], 2)
    assert grammar_for([], ["Ann"], 1) is None


def test_the_budget_covers_the_longest_admitted_query():
    """Long Freebase relation names once cut the model's constrained reply before ``RETURN … AS answer``."""
    rels = ["location.country.languages_spoken", "people.ethnicity.languages_spoken",
            "base.schemastaging.person_extra.net_worth"]
    qc = QueryConstraints(type_name="language", year=1990, ordinal="latest", second_name="Kingston")
    q = longest_query(rels, ["Jamaica", "Kingston"], 3, qc, cvt_relations=rels[:2])
    assert q.startswith('MATCH (e:Entity {name: "Kingston"})')  # the longer name
    assert len(re.findall(r"\(c\d:CVT\)", q)) == 3  # three CVT hops, each over the two CVT relations
    assert "`location.country.languages_spoken`|`people.ethnicity.languages_spoken`" in q
    one = longest_query(rels, ["Jamaica"], 1, None)
    assert "`base.schemastaging.person_extra.net_worth`|`location.country.languages_spoken`" in one
    assert q.endswith("DESC LIMIT 1") and " AND " in q and "Kingston" in q
    assert longest_query(rels, ["Jamaica"], 3, qc, cvt_relations=rels[:2]) != q  # the longer name counts
    plain = longest_query(rels, ["Jamaica"], 1)
    assert plain.endswith("RETURN DISTINCT x.name AS answer LIMIT 99") and "(c1:CVT)" not in plain
    assert len(q) > 3 * len(plain) and token_budget(q) > len(q) // 3


def test_a_mention_is_the_questions_words_and_a_soft_cvt_condition():
    from cypher.conditions import mention_words

    assert mention_words("Who plays Timon's voice in The Lion King?") == " who plays timon s voice in the lion king "
    q = compile_schema_path("m.ann", STEPS, constraints=QueryConstraints(mention_text=mention_words("wed in Rome?")))
    assert q.params["mention"] == " wed in rome " and "_c:CVT AND EXISTS" in q.cypher
    assert QueryConstraints(mention_text=" rome ").kinds == ["mention"] and not QueryConstraints(mention_text=" x ").empty
    with pytest.raises(ValueError, match="mention_words"):
        QueryConstraints(mention_text="Rome")
