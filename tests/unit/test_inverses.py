"""Inverse relations as data and as Cypher text (sgr/graph/inverses.py, cypher/compile.py, cypher/conditions.py).
Finding them in a real graph and walking them is tested in tests/e2e/sgr/test_inverses.py."""

from cypher.compile import compile_schema_path, pattern, step_conditions
from cypher.conditions import QueryConstraints
from sgr.graph.inverses import InverseRelations, find_inverses, mutual_best

ACTOR, ROLES = "tv.regular_tv_appearance.actor", "tv.tv_actor.starring_roles"
CAST = "tv.tv_program.regular_cast"
IN, HAS = "location.location.containedby", "location.location.contains"
INV = InverseRelations({ACTOR: ROLES, ROLES: ACTOR, IN: HAS, HAS: IN}, frozenset({IN, HAS}))


def test_mutual_best_pairs_each_relation_with_its_single_most_frequent_partner():
    pairs = [(ACTOR, ROLES, 26), ("film.film.starring", "film.performance.film", 9),
             ("film.film.starring", "film.performance.character", 1),  # a film named like its character
             ("film.film_character.portrayed_in_films", "film.performance.character", 33)]
    inv = mutual_best(pairs)
    assert inv[ACTOR] == ROLES and inv[ROLES] == ACTOR
    assert inv["film.film.starring"] == "film.performance.film"
    assert inv["film.performance.character"] == "film.film_character.portrayed_in_films"
    assert len(inv) == 6


def test_a_tie_or_a_one_sided_best_pairs_nothing():
    assert mutual_best([("a.x.r", "b.y.s", 3), ("a.x.r", "c.z.t", 3)]) == {}
    # b's best is c, so a (whose best is b) gets no partner; b and c pair
    assert mutual_best([("a.x.r", "b.y.s", 2), ("b.y.s", "c.z.t", 5)]) == {"b.y.s": "c.z.t", "c.z.t": "b.y.s"}


def test_entity_pairs_are_directed_and_cvt_pairs_are_not():
    lang, spoken, official = ("language.human_language.countries_spoken_in", "location.country.languages_spoken",
                              "location.country.official_language")
    edges = {ACTOR: 60, ROLES: 50, IN: 825, HAS: 300, lang: 700, spoken: 900, official: 400}
    inv = find_inverses([(ACTOR, ROLES, 26)], [(IN, HAS, 34), (lang, spoken, 104), (lang, official, 37)], edges)
    assert inv.pairs == {ACTOR: ROLES, ROLES: ACTOR, IN: HAS, HAS: IN, lang: spoken, spoken: lang}
    assert inv.directed == {IN, HAS, lang, spoken} and len(inv) == 3  # official_language is narrower: no pair


def test_a_stray_edge_or_two_pairs_nothing():
    nationality, subjects = "people.person.nationality", "book.written_work.subjects"
    stray = find_inverses([], [(subjects, nationality, 4)], {subjects: 118, nationality: 1307})
    assert stray.pairs == {} and not stray  # 4 of 1,307 nationality edges
    kept = find_inverses([], [(subjects, nationality, 14)], {subjects: 118, nationality: 1307})
    assert kept.pairs == {subjects: nationality, nationality: subjects}


def test_one_step_is_written_once_for_both_names():
    assert INV.canonical([CAST, ROLES]) == INV.canonical([CAST, ACTOR]) == (CAST, ACTOR)
    assert InverseRelations().canonical([CAST, ROLES]) == (CAST, ROLES)
    assert INV.names_of([CAST, ROLES]) == {ROLES: ACTOR, ACTOR: ACTOR} and InverseRelations().names_of([ROLES]) == {}
    assert INV.step(ROLES, "in") == INV.step(ACTOR, "out") == (ACTOR, None)  # a CVT pair: either direction
    assert INV.step(IN, "out") == INV.step(HAS, "in") == (IN, "out") and INV.step(HAS, "out") == (IN, "in")
    assert INV.step(CAST, "out") == (CAST, "out")


def test_a_cvt_step_matches_both_names_both_ways_and_an_entity_step_keeps_its_direction():
    text = pattern([(CAST, "out"), (ROLES, "in")], inverses=INV)
    assert text == f"(s:Entity {{id: $seed}})-[:`{CAST}`]->(n1:Entity)-[:`{ROLES}`|`{ACTOR}`]-(x:Entity)"
    assert pattern([(CAST, "out"), (ROLES, "in")]) == (
        f"(s:Entity {{id: $seed}})-[:`{CAST}`]->(n1:Entity)<-[:`{ROLES}`]-(x:Entity)")
    assert step_conditions([(CAST, "out"), (ROLES, "in")], inverses=INV) == []
    where = step_conditions([(IN, "out"), (HAS, "in")], inverses=INV)
    assert where == [f'(type(e1) = "{IN}") = (startNode(e1) = s)', f'(type(e2) = "{HAS}") <> (startNode(e2) = n1)']
    q = compile_schema_path("Ohio", [(IN, "out")], inverses=INV).cypher
    assert f"-[e1:`{IN}`|`{HAS}`]-(x:Entity)" in q and where[0] in q.splitlines()[1]
    constrained = compile_schema_path("Show", [(CAST, "out"), (ACTOR, "out")], inverses=INV,
                                      constraints=QueryConstraints(type_name="person")).cypher
    assert f"-[:`{ACTOR}`|`{ROLES}`]-(x:Entity)" in constrained


def test_college_and_university_name_each_other():
    text = compile_schema_path("X", [("a.b.c", "out")], constraints=QueryConstraints(type_name="college")).cypher
    assert '\\\\b(college|university)\\\\b' in text
    other = compile_schema_path("X", [("a.b.c", "out")], constraints=QueryConstraints(type_name="city")).cypher
    assert '\\\\b(city)\\\\b' in other and "university" not in other
