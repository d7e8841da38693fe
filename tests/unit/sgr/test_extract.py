"""Extraction of one Cypher query from model replies (cypher/extract.py)."""

from cypher.extract import extract_cypher, quote_relationship_types

REL = "location.country.languages_spoken"


def test_code_fence_and_chat_tokens():
    reply = f"Here you go:\n```cypher\nMATCH (e:Entity {{name: \"Jamaica\"}})-[:`{REL}`]->(x) RETURN x.name\n```<|im_end|>"
    assert extract_cypher(reply) == f'MATCH (e:Entity {{name: "Jamaica"}})-[:`{REL}`]->(x) RETURN x.name'


def test_leading_answer_label_and_trailing_prose():
    reply = "Answer: MATCH (e:Entity {name: 'Ohio'})-[:directed_by]->(x) RETURN x.name This query finds it."
    assert extract_cypher(reply) == "MATCH (e:Entity {name: 'Ohio'})-[:directed_by]->(x) RETURN x.name"


def test_escaped_underscores_get_unescaped_and_dotted_types_quoted():
    reply = "MATCH (e)-[:location.country.languages\\_spoken]->(x) RETURN x.name"
    assert extract_cypher(reply) == f"MATCH (e)-[:`{REL}`]->(x) RETURN x.name"


def test_alternatives_variables_and_ranges_are_quoted_one_by_one():
    q = "MATCH (e)-[r:a.b|c.d*1..2]-(x) RETURN x"
    assert quote_relationship_types(q) == "MATCH (e)-[r:`a.b`|`c.d`*1..2]-(x) RETURN x"
    assert quote_relationship_types("MATCH (e)-[:directed_by]->(x) RETURN x") == \
        "MATCH (e)-[:directed_by]->(x) RETURN x"
    assert quote_relationship_types("MATCH (e)-[:`a.b`]->(x) RETURN x") == "MATCH (e)-[:`a.b`]->(x) RETURN x"


def test_multiline_query_ends_at_blank_line_and_semicolon():
    reply = ("<|im_start|>assistant\nMATCH (e:Entity {name: \"Ohio\"})\n-[:`g.r`]->(x)\nRETURN DISTINCT x.name;\n\n"
             "Explanation: blah")
    assert extract_cypher(reply) == 'MATCH (e:Entity {name: "Ohio"})\n-[:`g.r`]->(x)\nRETURN DISTINCT x.name'


def test_no_query_gives_empty_string():
    assert extract_cypher("I do not know.<|im_end|>") == ""
    assert extract_cypher("") == ""


def test_prose_words_are_not_clauses():
    reply = "This will return the languages:\nmatch (e:Entity {name: 'Jamaica'})-[:`a.b`]->(x)\nRETURN x.name"
    assert extract_cypher(reply) == "match (e:Entity {name: 'Jamaica'})-[:`a.b`]->(x)\nRETURN x.name"
    assert extract_cypher("CREATE (n) RETURN n").startswith("CREATE")
