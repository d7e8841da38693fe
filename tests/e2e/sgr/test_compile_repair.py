"""Deterministic compiler and the generate → validate → repair loop (cypher/compile.py, cypher/repair.py)."""

from cypher.compile import compile_answer_query, compile_schema_path
from cypher.repair import generate_cypher
from langchain_core.messages import HumanMessage

LANG = "location.country.languages_spoken"


def test_compiled_query_walks_the_steps_in_their_directions():
    q = compile_schema_path("Ohio", [("government.political_district.representatives", "out"),
                                     ("government.government_position_held.office_holder", "out")])
    assert "(s:Entity {id: $seed})-[:`government.political_district.representatives`]->(n1:Entity)" in q.cypher
    assert "-[:`government.government_position_held.office_holder`]->(x:Entity)" in q.cypher
    assert q.params["seed"] == "Ohio"
    assert '"Ohio"' in q.inline() and "$seed" not in q.inline()
    back = compile_answer_query("Tom Hanks", [("starred_actors", "in"), ("directed_by", "out")])
    assert back == ('MATCH (e:Entity {name: "Tom Hanks"})<-[:`starred_actors`]-(n1)-[:`directed_by`]->(x) '
                    "RETURN DISTINCT x.name AS answer")


def test_repair_loop_feeds_problems_back_until_valid(scripted):
    llm = scripted("```\nMATCH (e)-[:made.up]->(x) RETURN x.name\n```",
                   f"MATCH (e:Entity {{name: \"Jamaica\"}})-[:{LANG}]->(x) RETURN x.name<|im_end|>")
    gen = generate_cypher(llm, [HumanMessage("q")], store=None, vocabulary={LANG}, max_repairs=2, execute=False,
                          allowed=[LANG])
    assert len(gen.attempts) == 2 and gen.repairs == 1
    assert gen.attempts[0].problems[0].kind == "unknown_relationship_type"
    assert gen.final.query == f'MATCH (e:Entity {{name: "Jamaica"}})-[:`{LANG}`]->(x) RETURN x.name'


def test_repair_rounds_are_bounded(scripted):
    llm = scripted("CREATE (n) RETURN n", "MATCH (n) DELETE n RETURN 1", "nothing", "never asked")
    gen = generate_cypher(llm, [HumanMessage("q")], store=None, vocabulary=set(), max_repairs=1, execute=False)
    assert len(gen.attempts) == 2 and gen.final is None


def test_compiled_query_runs_and_grounds_answers(webqsp_graph):
    q = compile_schema_path("Jamaica", [(LANG, "out")])
    rows = webqsp_graph.run_generated(q.cypher, q.params).rows
    assert {r["name"] for r in rows} == {"Jamaican English", "Jamaican Creole English Language"}
    assert all(r["path_ids"][0] == ["Jamaica", r["id"]] for r in rows)


def test_repair_with_explain_against_neo4j(webqsp_graph, scripted):
    llm = scripted('MATCH (e:Entity {name: "Jamaica"})-[:`location.country.language`]->(x) RETURN x.name',
                   f'MATCH (e:Entity {{name: "Jamaica"}})-[:`{LANG}`]->(x) RETURN DISTINCT x.name AS answer')
    gen = generate_cypher(llm, [HumanMessage("q")], store=webqsp_graph, vocabulary=None, max_repairs=2)
    first = gen.attempts[0].problems
    assert any(p.kind == "unknown_relationship_type" for p in first)  # from EXPLAIN's notification
    assert sorted(r["answer"] for r in gen.final.rows) == ["Jamaican Creole English Language", "Jamaican English"]
