"""C_q acting in Cypher (cypher/compile.py, cypher/conditions.py) on hand-built graphs: each constraint kind changes
the compiled query's answer, a CVT two-relation question is answered end to end, and the model's constrained
NL→Cypher reply parses and EXPLAINs."""

import pytest

from cypher.compile import compile_schema_path, compile_walk_filter
from cypher.conditions import QueryConstraints

pytestmark = pytest.mark.neo4j

SPOUSE = "people.person.spouse_s"
MARRIED = "people.marriage.spouse"
FROM = "people.marriage.from"
TO = "people.marriage.to"
BORN = "people.person.place_of_birth"
STEPS = [(SPOUSE, "out"), (MARRIED, "out")]


@pytest.fixture()
def marriages(clean_store):
    """Ann married three times through CVTs (dates as CVT properties, or as sibling date nodes for one marriage);
    a CVT also links Ann back to herself (Freebase lists both spouses). Only Carl is typed a person; Bob and Carl
    were born in Paris."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.ann", "Ann")
    for cvt, pid, name in [("m.w1", "m.bob", "Bob"), ("m.w2", "m.carl", "Carl"), ("m.w3", "m.dan", "Dan")]:
        b.add_entity(pid, name)
        b.add_triple("m.ann", SPOUSE, cvt)
        b.add_triple(cvt, MARRIED, pid)
        b.add_triple(cvt, MARRIED, "m.ann")
    b.add_property("m.w1", FROM, "1980-06-01")
    b.add_property("m.w1", TO, "1985-02-01")
    b.add_entity("d.1986", "1986-03-01")
    b.add_entity("d.1999", "1999-09-09")
    b.add_triple("m.w2", FROM, "d.1986")
    b.add_triple("m.w2", TO, "d.1999")
    b.add_property("m.w3", FROM, "2001-01-01")
    b.add_type("m.carl", "people.person")
    b.add_entity("m.paris", "Paris")
    b.add_triple("m.bob", BORN, "m.paris")
    b.add_triple("m.carl", BORN, "m.paris")
    write_graph(clean_store, b)
    return clean_store


def names(store, query):
    return sorted(r["name"] for r in store.run_generated(query.cypher, query.params).rows)


def run(store, **kw):
    return names(store, compile_schema_path("m.ann", STEPS, constraints=QueryConstraints(**kw)))


def test_without_constraints_the_walk_reaches_every_spouse(marriages):
    plain = compile_schema_path("m.ann", STEPS)
    assert names(marriages, plain) == ["Bob", "Carl", "Dan"]
    assert compile_schema_path("m.ann", STEPS, constraints=QueryConstraints()).cypher == plain.cypher


def test_a_date_filter_keeps_the_marriage_of_that_year(marriages):
    assert run(marriages, year=1990) == ["Carl"]  # sibling date nodes of the CVT
    assert run(marriages, year=1982) == ["Bob"]  # CVT literal properties
    assert run(marriages, year=2010) == ["Dan"]  # no end: still married
    assert run(marriages, year=1984, year_op="after") == ["Carl", "Dan"]
    assert run(marriages, year=1984, year_op="before") == ["Bob"]


def test_an_ordinal_picks_the_earliest_or_latest_walk(marriages):
    assert run(marriages, ordinal="earliest") == ["Bob"]
    assert run(marriages, ordinal="latest") == ["Dan"]
    assert run(marriages, ordinal="latest", year=1999, year_op="before") == ["Carl"]


def test_count_returns_the_number_with_the_counted_walks(marriages):
    rows = marriages.run_generated(*_q(compile_schema_path("m.ann", STEPS,
                                                           constraints=QueryConstraints(count=True)))).rows
    assert len(rows) == 1 and rows[0]["name"] == "3" and rows[0]["id"] is None
    assert sorted(w[-1] for w in rows[0]["path_ids"]) == ["m.bob", "m.carl", "m.dan"]
    assert all(w[0] == "m.ann" for w in rows[0]["path_ids"])
    assert run(marriages, count=True, year=1990) == ["1"]


def test_a_type_keeps_typed_answers_and_is_soft_when_nothing_matches(marriages):
    assert run(marriages, type_name="person") == ["Carl"]
    assert run(marriages, type_name="university") == ["Bob", "Carl", "Dan"]  # nothing to decide by: all kept


def test_a_second_entity_joins_the_answer(marriages):
    assert run(marriages, join_ids=("m.paris",)) == ["Bob", "Carl"]
    assert run(marriages, join_ids=("m.paris",), ordinal="latest") == ["Carl"]


def test_rows_keep_each_answers_own_walk(marriages):
    rows = marriages.run_generated(*_q(compile_schema_path("m.ann", STEPS,
                                                           constraints=QueryConstraints(year=1990)))).rows
    assert rows[0]["path_ids"] == [["m.ann", "m.w2", "m.carl"]] and rows[0]["path_names"] == [["Ann", None, "Carl"]]


def test_walk_filter_applies_the_same_conditions_to_given_walks(marriages):
    walks = [("m.bob", ["m.ann", "m.w1", "m.bob"]), ("m.carl", ["m.ann", "m.w2", "m.carl"]), ("m.paris", ["m.paris"])]
    q = compile_walk_filter(walks, QueryConstraints(year=1990))
    assert names(marriages, q) == ["Carl"]
    assert names(marriages, compile_walk_filter(walks, QueryConstraints(ordinal="earliest"))) == ["Bob"]


def _q(query):
    return query.cypher, query.params


@pytest.fixture()
def languages(clean_store):
    """A WebQSP-style CVT fact: a country's languages only through (:CVT) nodes of two relations, and a direct
    relation that leads elsewhere."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.nz", "New Zealand")
    for cvt, lid, lang, year in [("m.l1", "m.en", "English", "1840"), ("m.l2", "m.mi", "Maori", "1987")]:
        b.add_entity(lid, lang)
        b.add_triple("m.nz", "location.country.official_language_s", cvt)
        b.add_triple(cvt, "location.official_language.language", lid)
        b.add_property(cvt, "location.official_language.from", year)
    b.add_entity("m.wel", "Wellington")
    b.add_triple("m.nz", "location.country.capital", "m.wel")
    write_graph(clean_store, b)
    return clean_store


def test_a_cvt_two_relation_question_end_to_end(languages):
    """Only the CVT two-relation path reaches the answer, and the ordinal of the question picks it in Cypher."""
    from sgr.core.types import Question
    from tests.helpers import compiled_run

    q = Question(id="q", text="what was the first official language of new zealand?", topic_entities=["New Zealand"])
    res = compiled_run(languages, q, hops=1)
    assert res.subgraph.schema_paths[0].relations == ["location.country.official_language_s",
                                                      "location.official_language.language"]
    assert res.prediction.answer_texts == ["English"], res.prediction.extra
    assert res.prediction.answers[0].paths[0].nodes == ["m.nz", "m.l1", "m.en"]
    assert "reduce(" in res.prediction.cypher[-1]  # the ordinal acted in the compiled query
    q2 = Question(id="q2", text="what official language did new zealand adopt after 1900?",
                  topic_entities=["New Zealand"])
    assert compiled_run(languages, q2, hops=1).prediction.answer_texts == ["Maori"]


QC = QueryConstraints(type_name="person", year=1990, ordinal="latest", second_name="Paris")


def _forms(grammar_qc):
    """Queries the constrained grammar admits for the CVT walk Ann → marriage → spouse: each condition, all of them,
    the ordinal."""
    from cypher.conditions import date_key
    from cypher.grammar import conditions

    walk = ["c1", "x"]
    path = f'MATCH (e:Entity {{name: "Ann"}})-[:`{SPOUSE}`]->(c1:CVT)-[:`{MARRIED}`]->(x:Entity)'
    plain = " RETURN DISTINCT x.name AS answer"
    conds = conditions(grammar_qc, walk, has_types=True)
    assert conds[0] == "x <> e"
    out = [path + " WHERE " + " AND ".join(dict.fromkeys(["x <> e", c])) + plain for c in conds]
    out.append(path + " WHERE " + " AND ".join(conds) + plain)
    out.append(path + f" WHERE x <> e RETURN x.name AS answer ORDER BY {date_key('latest', '[c1, x]')} DESC LIMIT 1")
    return out


def test_every_admitted_form_explains_and_acts(marriages):
    from cypher.validate import validate

    got = []
    for q in _forms(QC):
        check = validate(marriages, q, set(marriages.relation_types()))
        assert check.ok, (q, check.problems)
        got.append(sorted(r["answer"] for r in marriages.run_generated(q).rows))
    assert got == [["Bob", "Carl", "Dan"], ["Carl"], ["Carl"], ["Bob", "Carl"], ["Carl"], ["Dan"]]


def test_llama_cpp_parses_the_constrained_grammar(local_llm_server):
    from tests.helpers import check_gbnf

    from cypher.grammar import cypher_grammar

    check_gbnf(cypher_grammar([SPOUSE, MARRIED, BORN], ["Ann", "Paris"], 3, QC, cvt_relations=[SPOUSE, MARRIED],
                              has_types=True))
    check_gbnf(cypher_grammar([SPOUSE, MARRIED], [], 2, QueryConstraints(year=1990, year_op="before",
                                                                        ordinal="earliest")))
    check_gbnf(cypher_grammar([SPOUSE], ["Ann"], 2, QueryConstraints(extreme="max", measure="area|population",
                                                                     ordinal="latest")))
    check_gbnf(cypher_grammar([SPOUSE], ["Ann"], 1, QueryConstraints(number=2.5e6, number_op=">=",
                                                                     measure="population")))


def test_the_models_constrained_reply_parses_and_explains(local_llm, marriages):
    from cypher.extract import extract_cypher
    from cypher.grammar import longest_query, token_budget
    from cypher.translate import example_for, grammar_for, relation_endpoints, translate_messages
    from cypher.validate import validate

    rels = [SPOUSE, MARRIED, BORN]
    endpoints = relation_endpoints(marriages, rels, marriages.graph_version())
    msgs = translate_messages("who was Ann married to in 1990?", "Ann", endpoints, example_for(rels))
    qc = QueryConstraints(year=1990, ordinal="latest", number=2, measure="population")  # every condition kind
    cvt = [e.relation for e in endpoints if "CVT" in (e.head, e.tail)]
    assert cvt == [SPOUSE, MARRIED]
    grammar = grammar_for(rels, ["Ann"], 1, qc, cvt_relations=cvt)
    budget = token_budget(longest_query(rels, ["Ann"], 1, qc, cvt_relations=cvt))
    reply = local_llm.complete(msgs, stage="cypher", grammar=grammar, max_tokens=budget)
    query = extract_cypher(reply)
    assert query.startswith('MATCH (e:Entity {name: "Ann"})'), reply
    check = validate(marriages, query, set(marriages.relation_types()))
    assert check.ok, (query, check.problems)
    marriages.run_generated(query)


CONTAINS = "location.location.contains"
POPULATION = "location.statistical_region.population"


@pytest.fixture()
def cities(clean_store):
    """Freebase-style numbers: populations as dated integers on CVT nodes, areas as literal properties; Seville has
    an area only, Toledo no number at all."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    b.add_entity("m.es", "Spain")
    for mid, name, pop, area in [("m.mad", "Madrid", "3223334", "604.3"), ("m.bcn", "Barcelona", "1620343", "101.4"),
                                 ("m.sev", "Seville", None, "140.8"), ("m.tol", "Toledo", None, None)]:
        b.add_entity(mid, name)
        b.add_triple("m.es", CONTAINS, mid)
        if pop:
            b.add_triple(mid, POPULATION, mid + ".pop")
            b.add_property(mid + ".pop", "measurement_unit.dated_integer.number", pop)
            b.add_property(mid + ".pop", "measurement_unit.dated_integer.year", "2011")  # not the number
            b.add_property(mid + ".pop", "a.year", "1")
        if area:
            b.add_property(mid, "location.location.area", area)
    write_graph(clean_store, b)
    return clean_store


def test_a_numeric_superlative_and_comparison_change_the_answer(cities):
    def run_c(**kw):
        return names(cities, compile_schema_path("m.es", [(CONTAINS, "out")], constraints=QueryConstraints(**kw)))

    assert run_c() == ["Barcelona", "Madrid", "Seville", "Toledo"]
    assert run_c(extreme="max", measure="population") == ["Madrid"]  # CVT numbers
    assert run_c(extreme="min", measure="population") == ["Barcelona"]  # the cities without one do not compete
    assert run_c(extreme="min", measure="area") == ["Barcelona"] and run_c(extreme="max", measure="area") == ["Madrid"]
    assert run_c(number=2e6, number_op=">", measure="population") == ["Madrid"]
    assert run_c(number=120, number_op="<=", measure="area") == ["Barcelona"]
    assert run_c(number=5e6, number_op=">", measure="population") == ["Barcelona", "Madrid", "Seville", "Toledo"]  # soft
    assert run_c(extreme="max", measure="depth") == ["Barcelona", "Madrid", "Seville", "Toledo"]  # nothing to decide by
    walks = [("m.bcn", ["m.es", "m.bcn"]), ("m.sev", ["m.es", "m.sev"])]
    assert names(cities, compile_walk_filter(walks, QueryConstraints(extreme="max", measure="area"))) == ["Seville"]


def test_the_grammars_superlative_return_runs_in_neo4j(cities):
    from cypher.grammar import cypher_grammar, ordered_returns

    qc = QueryConstraints(extreme="max", measure="area|population")
    (ret,) = ordered_returns(qc, ["x"])
    assert ret in cypher_grammar([CONTAINS], ["Spain"], 1, qc).replace('\\"', '"')
    base = f'MATCH (e:Entity {{name: "Spain"}})-[:`{CONTAINS}`]->(x:Entity) WHERE x <> e'
    assert [r["answer"] for r in cities.run_generated(base + ret).rows] == ["Madrid"]
    small = ordered_returns(QueryConstraints(extreme="min", measure="area"), ["x"])[0]
    assert [r["answer"] for r in cities.run_generated(base + small).rows] == ["Barcelona"]


def test_a_cvt_neighbour_named_in_the_question_keeps_its_walk(marriages):
    from cypher.conditions import mention_words
    from loaders.writer import GraphBatch, write_graph
    from sgr.methods.sgr.constraints import constrained_walks

    b = GraphBatch()
    b.add_entity("m.rome", "Rome")
    b.add_triple("m.w3", "people.marriage.location_of_ceremony", "m.rome")  # Ann married Dan in Rome
    write_graph(marriages, b)
    assert run(marriages, mention_text=mention_words("who did Ann marry in Rome?")) == ["Dan"]
    assert run(marriages, mention_text=mention_words("who did Ann marry in Oslo?")) == ["Bob", "Carl", "Dan"]  # soft
    walks = [("m.bob", ["m.ann", "m.w1", "m.bob"]), ("m.dan", ["m.ann", "m.w3", "m.dan"])]
    kept = constrained_walks(marriages, walks, QueryConstraints(mention_text=mention_words("married in Rome")))
    assert kept == {("m.ann", "m.w3", "m.dan")}
    assert constrained_walks(marriages, walks, QueryConstraints(count=True)) is None  # nothing left to apply


def test_only_voting_paths_that_meet_the_second_entity_vote(clean_store):
    """Two linked entities ("who did Hanks play in Apollo 13?"): when the vote decides, the walks that meet the
    second entity (the answer or a CVT of its walk touches it) vote alone; without it, every walk votes."""
    from sgr.core.types import Question
    from tests.helpers import compiled_run, hand_graph

    actor, film, character = "film.actor.film", "film.performance.film", "film.performance.character"
    names = {"m.hanks": "Hanks", "m.apollo": "Apollo 13", "m.big": "Big", "m.male": "Male", "m.lovell": "Jim Lovell",
             "m.josh": "Josh Baskin"}
    triples = [("m.hanks", "people.person.gender", "m.male"),
               ("m.hanks", actor, "m.p1"), ("m.p1", film, "m.apollo"), ("m.p1", character, "m.lovell"),
               ("m.hanks", actor, "m.p2"), ("m.p2", film, "m.big"), ("m.p2", character, "m.josh")]
    store = hand_graph(clean_store, names, triples)
    both = Question(id="q", text="who did hanks play in apollo 13?", topic_entities=["Hanks", "Apollo 13"])
    res = compiled_run(store, both, compiled_fallback=False)
    assert res.route == "collaborative" and res.prediction.answer_texts == ["Jim Lovell"], res.prediction.answer_texts
    assert "second entity on the voting paths: kept 1 of 5" in res.prediction.extra["constraints_applied"]  # not "mention"
    assert res.prediction.extra["decision"]["inputs"]["joined"]  # the join held, and the record says so
    one = compiled_run(store, Question(id="q", text="who did hanks play?", topic_entities=["Hanks"]),
                       compiled_fallback=False)
    assert one.route == "collaborative" and len(one.prediction.extra["decision"]["inputs"]["votes"]) > 1
    assert not one.prediction.extra.get("constraints_applied")
    assert not one.prediction.extra["decision"]["inputs"]["joined"]
