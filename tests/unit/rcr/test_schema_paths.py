"""RCR's relation-path stage in SGR's schema format (sgr/methods/rcr/paths.py): the grammar over the retrieved
candidates, the reply parsed back, and when the stage uses it."""

from __future__ import annotations

import pytest

from sgr.core.errors import ConfigError
from sgr.methods.rcr.method import RCRConfig
from sgr.methods.rcr.paths import schema_path_grammar, schema_relation_paths, uses_graph_grammar, uses_schema_prompt
from sgr.methods.sgr.prompts import SCHEMA_SYSTEM
from tests.helpers import scripted_llm


def test_the_schema_grammar_admits_only_candidate_relations_up_to_max_hops() -> None:
    g = schema_path_grammar(["a.b.c", "d.e.f"], max_hops=2, max_paths=2)
    assert g.splitlines()[0] == 'root ::= path ("\\n" path)?'
    assert g.splitlines()[1] == 'path ::= "path: " rel (" > " rel)?'
    assert g.splitlines()[2] == 'rel ::= "a.b.c" | "d.e.f"'
    with pytest.raises(ValueError):
        schema_path_grammar([])


def test_schema_paths_parse_the_reply_and_drop_what_the_candidates_lack() -> None:
    llm = scripted_llm("path: a.b.c > d.e.f\npath: x.y.z\npath: a.b.c > a.b.c > a.b.c > d.e.f\npath: d.e.f")
    calls = []
    real = llm.complete
    llm.complete = lambda msgs, **kw: calls.append((msgs, kw)) or real(msgs, **kw)
    paths, raw = schema_relation_paths(llm, "who?", ["Alice"], ["a.b.c", "d.e.f"], RCRConfig(beam=3, max_hops=3))
    assert paths == [("a.b.c", "d.e.f"), ("d.e.f",)] and raw.startswith("path: a.b.c")
    sent, kw = calls[0]
    assert sent[0].content == SCHEMA_SYSTEM and sent[-1].content == "Question: who?\nTopic: Alice"
    assert 'path ::= "path: " rel' in kw["grammar"] and kw["stage"] == "rcr-paths"


def test_the_schema_prompt_is_used_for_tuned_weights_or_when_asked() -> None:
    assert uses_schema_prompt("auto", "smollm2-135m-instruct-q4_1-tuned-shipped-1234abcd")
    assert not uses_schema_prompt("auto", "smollm2-135m-instruct-q4_1") and not uses_schema_prompt("auto", None)
    assert uses_schema_prompt("schema", "gpt-4o-mini") and not uses_schema_prompt("rcr", "x-tuned-1")
    with pytest.raises(ConfigError, match="path_prompt"):
        uses_schema_prompt("beam", "x")


def test_the_graph_grammar_goes_with_the_schema_prompt_and_an_unknown_one_is_refused() -> None:
    assert uses_graph_grammar("auto", True) and not uses_graph_grammar("auto", False)
    assert uses_graph_grammar("graph", True) and not uses_graph_grammar("relations", True)
    with pytest.raises(ConfigError, match="needs the schema prompt"):
        uses_graph_grammar("graph", False)
    with pytest.raises(ConfigError, match="path_grammar must be one of auto, relations, graph"):
        uses_graph_grammar("trie", True)


def test_the_graph_grammar_goes_as_deep_as_sgr_goes_for_the_question(monkeypatch) -> None:
    import sgr.methods.sgr.subgraph as subgraph
    from sgr.methods.rcr.paths import grammar_depth

    class Hops:  # the hop model's P(h | q): three hops for "the films that share actors with X"
        def distribution(self, q: str) -> dict[int, float]:
            return {1: 0.1, 2: 0.2, 3: 0.7} if "share actors" in q else {1: 0.6, 2: 0.3, 3: 0.1}

    monkeypatch.setattr(subgraph, "load_hop_model", lambda: Hops())
    deep, near = "what genres do the films that share actors with Heat have", "what genre is Heat"
    assert grammar_depth(RCRConfig(), deep, "Heat") == 3 and grammar_depth(RCRConfig(), near, "Heat") == 2
    assert grammar_depth(RCRConfig(max_hops=2), deep, "Heat") == 2  # never beyond max_hops
    assert grammar_depth(RCRConfig(path_depth="max"), near, "Heat") == 3
    with pytest.raises(ConfigError, match="path_depth must be one of question, max"):
        grammar_depth(RCRConfig(path_depth="deep"), near, "Heat")
