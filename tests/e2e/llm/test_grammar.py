"""cypher.grammar: the GBNF is built from the schema only, escapes literals, and parses in llama.cpp."""

from __future__ import annotations

import os
import re

import pytest

from cypher.grammar import cypher_grammar
from sgr.core.text import cypher_literal, gbnf_literal

RELS = ["film.film.directed_by", "people.person.place_of_birth"]


def test_only_the_given_relation_types_and_entities_appear() -> None:
    g = cypher_grammar(RELS, ["Tom Hanks"], max_hops=2)
    type_rule = next(line for line in g.splitlines() if line.startswith("type ::="))
    assert re.findall(r"`([^`]+)`", type_rule) == RELS
    entity_rule = next(line for line in g.splitlines() if line.startswith("entity ::="))
    assert entity_rule == 'entity ::= "\\"Tom Hanks\\""'
    assert "path2 ::=" in g and "path3 ::=" not in g
    assert "CREATE" not in g and "DELETE" not in g and "SET " not in g


def test_escaping_of_quotes_and_backticks() -> None:
    assert cypher_literal('Say "hi"') == '"Say \\"hi\\""'
    assert gbnf_literal(cypher_literal('Say "hi"')) == '"\\"Say \\\\\\"hi\\\\\\"\\""'
    g = cypher_grammar(["odd`type"], [], max_hops=1)
    assert '"`odd``type`"' in g
    assert "entity ::= string" in g


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least one relation"):
        cypher_grammar([], ["x"])
    with pytest.raises(ValueError, match="max_hops"):
        cypher_grammar(RELS, ["x"], max_hops=0)


def test_llama_cpp_parses_the_grammar() -> None:
    from tests.helpers import check_gbnf
    from sgr.llm import server as local_llm
    from sgr.core.errors import LLMError

    try:
        local_llm.check_installed()
        local_llm.model_path()
    except LLMError as exc:
        if os.environ.get("SGR_REQUIRE_LLM") == "1":
            raise
        pytest.skip(str(exc))

    check_gbnf(cypher_grammar(RELS + ['a"b'], ["Tom Hanks", 'Say "hi"', "Zoë"], max_hops=3))
    check_gbnf(cypher_grammar(RELS, [], max_hops=1))
    with pytest.raises(ValueError, match="could not parse"):
        check_gbnf('root ::= "MATCH" undefined_rule')
