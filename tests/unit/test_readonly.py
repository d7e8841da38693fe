"""The read path's text filter (the fast first refusal) and the plan check's rules, without a server.

Issue 42 item 2 found five ways past the text filter; each is here with its variants. Neo4j's own plan decides in the
end: ``tests/e2e/security/test_plan_check.py`` runs the same queries with the text filter switched off.
"""

from __future__ import annotations

import pytest

from sgr.core.errors import CypherError
from sgr.graph.readonly import READ_OPERATORS, check_plan, check_read_query, cypher_code

BYPASSES = {
    # 1. "AS index" passed the SHOW INDEX exception
    "show-as-index": "SHOW USERS YIELD user AS index RETURN index",
    "show-as-constraint": "SHOW SETTINGS YIELD name AS constraint RETURN constraint",
    "show-index-word-later": "SHOW TRANSACTIONS YIELD currentQuery WHERE currentQuery CONTAINS 'INDEX' RETURN 1",
    # 2. a CYPHER prefix (with and without options)
    "cypher-prefix": "CYPHER SHOW SETTINGS YIELD name RETURN name",
    "cypher-version": "CYPHER 5 SHOW SETTINGS YIELD name RETURN name",
    "cypher-options": "CYPHER 5 runtime=slotted planner=cost EXPLAIN SHOW USERS",
    "cypher-newline": "CYPHER\nSHOW\tSETTINGS",
    # 3. no space after CALL / USE, back-quoted procedure names
    "call-backtick": "CALL`dbms`.listConfig() YIELD name,value RETURN *",
    "call-all-quoted": "CALL `dbms`.`listConfig`() YIELD name RETURN name",
    "call-comment": "CALL/* x */dbms.listConfig() YIELD name RETURN name",
    "call-spaced-dots": "CALL dbms . listConfig() YIELD name RETURN name",
    "call-after-allowed": "CALL db.labels() YIELD label CALL`dbms`.listConfig() YIELD name RETURN name",
    "call-lower": "call `dbms`.listconfig",
    "use-backtick": "USE`system` SHOW USERS",
    # 4. comment styles: Cypher ends a // comment at \r as well as \n; /* */ anywhere
    "comment-cr": "//\rSHOW SETTINGS YIELD name RETURN name",
    "comment-crlf": "// hi\r\nSHOW SETTINGS",
    "comment-block": "/* read only */ SHOW SETTINGS YIELD name RETURN name",
    "comment-block-multiline": "/*\n*/\nSHOW USERS",
    # 5. NFKC folding moved a string's end (＼ → \\ escaped the closing quote)
    "nfkc-backslash": "WITH '＼' AS a CALL dbms.listConfig() YIELD name WITH name,'' AS b RETURN name",
    "nfkc-backslash-double": 'WITH "＼" AS a CALL dbms.listConfig() YIELD name WITH name,"" AS b RETURN name',
    "nfkc-quote": "WITH '＇' AS a CALL dbms.listConfig() YIELD name RETURN name",
    "nfkc-small-backslash": "WITH '﹨' AS a CALL dbms.listConfig() YIELD name WITH name,'' AS b RETURN name",
    # 6. TERMINATE after SHOW TRANSACTIONS (killed another session's query)
    "terminate-after-show": "SHOW TRANSACTIONS YIELD transactionId AS index, currentQuery WHERE currentQuery "
                            "CONTAINS 'victim' TERMINATE TRANSACTIONS index YIELD message RETURN message",
    "terminate-alone": "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
    # administration commands
    "show-users": "SHOW USERS", "show-all-users": "show all users", "show-databases": "SHOW DATABASES",
    "create-user": "CREATE USER eve SET PASSWORD 'password123'", "drop-database": "DROP DATABASE neo4j",
    "alter-user": "ALTER USER neo4j SET PASSWORD 'password123'", "grant": "GRANT ROLE admin TO eve",
    "explain-show": "EXPLAIN SHOW USERS", "profile-show": "PROFILE SHOW SETTINGS",
}


@pytest.mark.parametrize("query", list(BYPASSES.values()), ids=list(BYPASSES))
def test_text_filter_refuses_every_bypass(query):
    with pytest.raises(CypherError) as err:
        check_read_query(query)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("query", [
    "MATCH (n) RETURN n.callCount", "MATCH (n) WHERE n.recall > 1 RETURN n", "MATCH (start)-[r]->(stop) RETURN stop",
    "SHOW INDEXES YIELD name RETURN name", "SHOW RANGE INDEXES", "SHOW NODE UNIQUE CONSTRAINTS",
    "SHOW FULLTEXT INDEXES YIELD name RETURN name", "CYPHER 5 MATCH (n) RETURN n LIMIT 1",
    "CALL db.labels() YIELD label RETURN label", "CALL `db`.`labels`() YIELD label RETURN label",
    "CALL { MATCH (n) RETURN n LIMIT 1 } RETURN n", "CALL () { RETURN 1 AS x } RETURN x",
    "MATCH (n) WHERE n.name = 'SHOW USERS; CALL dbms.listConfig()' RETURN n",
    "MATCH (n) // CALL dbms.listConfig()\nRETURN n", "MATCH (n) /* SHOW USERS */ RETURN n",
    "MATCH (n:`SHOW USERS`) RETURN n", "MATCH (n) WHERE n.name = '＼' RETURN n",
    "CALL db.index.fulltext.queryNodes('entity_name', 'x') YIELD node RETURN node",
])
def test_text_filter_admits_reads(query):
    check_read_query(query)


def test_code_is_lexed_before_it_is_folded():
    # the full-width backslash stays inside its string: the CALL after it is code
    assert "CALL dbms.listConfig()" in cypher_code("WITH '＼' AS a CALL dbms.listConfig() RETURN 1")
    # full-width letters in code fold to their plain forms; in strings they stay data
    assert "LOAD CSV" in cypher_code("ＬＯＡＤ ＣＳＶ FROM 'x' AS l RETURN l")
    assert "LOAD" not in cypher_code("RETURN 'ＬＯＡＤ ＣＳＶ' AS x")
    assert cypher_code("// a\rCALL x()") == " \rCALL x()"


def _plan(*ops: str, details: str = "") -> dict:
    """A plan as the driver gives it: the first operator at the root, each next one its only child."""
    node: dict | None = None
    for op in reversed(ops):
        node = {"operatorType": op, "args": {"Details": details if op.startswith("ProcedureCall") else ""},
                "children": [node] if node else []}
    return node


@pytest.mark.parametrize("qtype,plan,word", [
    ("r", _plan("ProduceResults@neo4j", "ShowSettings@neo4j"), "ShowSettings"),
    ("r", _plan("ProduceResults@neo4j", "Apply@neo4j", "TerminateTransactions@neo4j"), "TerminateTransactions"),
    ("s", _plan("AdministrationCommand@system"), "AdministrationCommand"),
    ("r", _plan("ProduceResults@neo4j", "LoadCSV@neo4j"), "LoadCSV"),
    ("rw", _plan("ProduceResults@neo4j", "Create@neo4j"), "Create"),
    ("s", _plan("ProduceResults@neo4j", "ProcedureCall@neo4j", details="dbms.listConfig() :: (name :: STRING)"),
     "dbms.listConfig"),
    ("r", _plan("ProduceResults@neo4j", "ProcedureCall@neo4j", details="`dbms`.`listConfig`() :: (name :: STRING)"),
     "dbms.listConfig"),
    ("r", _plan("ProduceResults@system", "AllNodesScan@system"), "system"),
    ("w", _plan("ProduceResults@neo4j", "AllNodesScan@neo4j"), "writes"),
])
def test_plan_check_refuses(qtype, plan, word):
    with pytest.raises(CypherError) as err:
        check_plan(qtype, plan, "neo4j")
    assert word in str(err.value) and "\n" not in str(err.value)


def test_plan_check_admits_reads_and_read_procedures():
    check_plan("r", _plan("ProduceResults@neo4j", "Limit@neo4j", "Expand(All)@neo4j", "NodeIndexSeek@neo4j"), "neo4j")
    check_plan("r", _plan("ProduceResults@neo4j", "ProcedureCall@neo4j",
                          details="db.index.fulltext.queryNodes($autostring_0, $autostring_1) :: (node :: NODE)"),
               "neo4j")
    assert not {"LoadCSV", "Create", "Merge", "ShowSettings", "TerminateTransactions", "AdministrationCommand",
                "TransactionForeach", "TransactionApply", "Foreach"} & READ_OPERATORS


def test_a_plan_shape_ignores_names_values_and_comments_only():
    """Queries that differ in back-quoted names, strings or comments share a shape; a clause or a procedure does not."""
    from sgr.graph.readonly import plan_shape

    a = 'MATCH (s:Entity {id: $seed})-[:`film.film.directed_by`]->(x) WHERE x.name <> "Alien" RETURN x // one'
    b = 'MATCH (s:Entity {id: $seed})-[:`people.person.place_of_birth`]->(x) WHERE x.name <> \'Paris\' RETURN x'
    assert plan_shape(a) == plan_shape(b)
    assert plan_shape(a) != plan_shape(a.replace("RETURN x", "SET x.v = 1 RETURN x"))
    assert plan_shape(a) != plan_shape(a.replace("$seed", "$other"))
    call = "CALL `db`.`labels`() YIELD label RETURN label"
    assert plan_shape(call) == call  # a procedure's name may be back-quoted: the whole text is the shape
    assert plan_shape(call) != plan_shape(call.replace("labels", "createLabel"))
    sub = "MATCH (n) CALL (n) { MATCH (n)-[:`a`]->(m) RETURN m } RETURN m"
    assert plan_shape(sub) == plan_shape(sub.replace("`a`", "`b`"))  # a subquery is not a procedure call
