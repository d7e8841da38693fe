"""Inverse relations as data and as Cypher text (sgr/graph/inverses.py, cypher/compile.py, cypher/conditions.py).
Finding them in a real graph and walking them is tested in tests/e2e/sgr/test_inverses.py."""

from cypher.compile import compile_schema_path, pattern
from cypher.conditions import QueryConstraints
from sgr.graph.inverses import canonical, mutual_best

ACTOR, ROLES = "tv.regular_tv_appearance.actor", "tv.tv_actor.starring_roles"
CAST = "tv.tv_program.regular_cast"


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


def test_canonical_writes_one_name_per_pair():
    inv = {ACTOR: ROLES, ROLES: ACTOR}
    assert canonical([CAST, ROLES], inv) == canonical([CAST, ACTOR], inv) == (CAST, ACTOR)
    assert canonical([CAST, ROLES], {}) == (CAST, ROLES)


def test_a_step_with_an_inverse_matches_both_names_both_ways():
    inv = {ACTOR: ROLES, ROLES: ACTOR}
    text = pattern([(CAST, "out"), (ROLES, "in")], inverses=inv)
    assert text == (f"(s:Entity {{id: $seed}})-[:`{CAST}`]->(n1:Entity)-[:`{ROLES}`|`{ACTOR}`]-(x:Entity)")
    assert pattern([(CAST, "out"), (ROLES, "in")]) == (
        f"(s:Entity {{id: $seed}})-[:`{CAST}`]->(n1:Entity)<-[:`{ROLES}`]-(x:Entity)")
    constrained = compile_schema_path("Show", [(CAST, "out"), (ACTOR, "out")], inverses=inv,
                                      constraints=QueryConstraints(type_name="person")).cypher
    assert f"-[:`{ACTOR}`|`{ROLES}`]-(x:Entity)" in constrained


def test_college_and_university_name_each_other():
    text = compile_schema_path("X", [("a.b.c", "out")], constraints=QueryConstraints(type_name="college")).cypher
    assert 'STARTS WITH "college" OR _w STARTS WITH "university"' in text
    other = compile_schema_path("X", [("a.b.c", "out")], constraints=QueryConstraints(type_name="city")).cypher
    assert 'STARTS WITH "city")' in other and "university" not in other
