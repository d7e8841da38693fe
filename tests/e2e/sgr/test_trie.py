"""The graph grammar of the schema stage (sgr/methods/sgr/trie.py): relation paths read from a hand-built graph,
GBNF over exactly those paths, and the real local model decoding under it."""

import math

import pytest

from sgr.methods.sgr.prompts import parse_schema_reply
from sgr.methods.sgr.trie import PathTrie, path_grammar, prefilter, relation_paths, score_reply
from tests.helpers import hand_graph

REPS = "government.political_district.representatives"
HOLDER = "government.government_position_held.office_holder"
IN = "location.location.containedby"
CAPITAL = "location.country.capital"


@pytest.fixture()
def ohio(clean_store):
    """Ohio -[REPS]-> (CVT) -[HOLDER]-> John Kasich; Ohio -[IN]-> United States -[CAPITAL]-> Washington."""
    return hand_graph(clean_store, {"m.ohio": "Ohio", "m.kasich": "John Kasich", "m.us": "United States",
                                    "m.dc": "Washington"},
                      [("m.ohio", REPS, "m.cvt1"), ("m.cvt1", HOLDER, "m.kasich"), ("m.ohio", IN, "m.us"),
                       ("m.us", CAPITAL, "m.dc")])


@pytest.mark.neo4j
def test_the_trie_holds_exactly_the_paths_of_the_graph(ohio):
    trie = relation_paths(ohio, ["m.ohio"], max_hops=2)
    assert set(trie.paths) == {(REPS, HOLDER), (IN,), (IN, CAPITAL)}
    assert (REPS,) not in trie  # it ends on a CVT: never a path of its own
    assert trie.paths[(IN, CAPITAL)] == [("m.ohio", ((IN, "out"), (CAPITAL, "out")))]
    # one entity hop: the CVT hop is transparent, the second named hop is not
    assert set(relation_paths(ohio, ["m.ohio"], max_hops=1).paths) == {(REPS, HOLDER), (IN,)}
    # from the other end the directions are reversed
    back = relation_paths(ohio, ["m.kasich"], max_hops=1)
    assert back.paths[(HOLDER, REPS)] == [("m.kasich", ((HOLDER, "in"), (REPS, "in")))]


def test_the_grammar_is_a_trie_of_relation_names():
    trie = PathTrie({(IN,): [], (IN, CAPITAL): [], (REPS, HOLDER): []})
    g = path_grammar(trie, n_best=2, constraints=False)
    assert g.startswith('root ::= line ("\\n" line){0,1}')
    assert f'"{IN}" (" > " ' in g  # IN alone is a path and a prefix
    assert f'"{REPS}" " > " ' in g  # REPS alone is no path
    assert "cons" not in g
    with pytest.raises(ValueError):
        path_grammar(PathTrie())


def test_grammar_parses_in_llama_cpp():
    pytest.importorskip("llama_cpp")
    from tests.helpers import check_gbnf

    check_gbnf(path_grammar(PathTrie({(IN,): [], (IN, CAPITAL): [], (REPS, HOLDER): []})))


def test_prefilter_keeps_the_best_scored_paths():
    trie = PathTrie({("a",): [], ("b",): [], ("a", "c"): []})
    kept = prefilter(trie, lambda names: {"a": 0.9, "b": 0.1, "c": 0.5}, 2)
    assert set(kept.paths) == {("a",), ("a", "c")}


def test_rho_is_the_geometric_mean_token_probability_of_each_line():
    text = f"path: {IN}\npath: {IN}\npath: {REPS} > {HOLDER}\nconstraint: time = 2011"
    # two tokens per line (the split is arbitrary); the newline opens the next line
    toks = [("path: ", -0.1), (IN, -0.3), ("\npath: ", -1.0), (IN, -1.0), ("\npath: ", -2.0),
            (f"{REPS} > {HOLDER}", -2.0), ("\nconstraint: time = 2011", -0.5)]
    paths, constraints = score_reply(text, toks)
    assert [p.relations for p in paths] == [(IN,), (REPS, HOLDER)]
    assert paths[0].rho == pytest.approx(math.exp(-0.2)) and paths[1].rho == pytest.approx(math.exp(-2.0))
    assert constraints == [("time", "2011")]
    only = PathTrie({(IN,): []})
    assert [p.relations for p in score_reply(text, toks, allowed=only)[0]] == [(IN,)]
    assert math.isnan(score_reply(text, None)[0][0].rho)


@pytest.mark.llm
@pytest.mark.neo4j
def test_the_model_can_write_only_paths_that_exist(ohio, local_llm):
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    trie = relation_paths(ohio, ["m.ohio"], max_hops=2)
    grammar = path_grammar(trie, n_best=1, constraints=False)

    def copy(line):
        return [SystemMessage("Copy the line the user gives, exactly."), HumanMessage("path: a.b.c > d.e.f"),
                AIMessage("path: a.b.c > d.e.f"), HumanMessage(line)]

    rec = local_llm.complete_scored(copy("path: people.person.spouse_s"), stage="test", grammar=grammar, max_tokens=40)
    paths, _ = parse_schema_reply(rec.text)
    assert paths and all(p in trie for p in paths)  # asked for a path the graph lacks, it writes one it has
    rec = local_llm.complete_scored(copy(f"path: {REPS} > {HOLDER}"), stage="test", grammar=grammar, max_tokens=40)
    assert parse_schema_reply(rec.text)[0] == [(REPS, HOLDER)]  # an existing path can be written
    scored, _ = score_reply(rec.text, rec.token_logprobs, trie)
    assert scored and 0.0 < scored[0].rho <= 1.0  # with its real probability


class _Prefers:
    """A relation retriever whose score puts one relation first (every other scores 0); it ranks like cosine."""

    def __init__(self, store, favourite):
        from sgr.retrieval.relations import load_retriever

        self.base, self.favourite = load_retriever(store, "cosine"), favourite

    def retrieve(self, question, k, among=None):
        return self.base.retrieve(question, k, among)

    def score_of(self, question, names):
        return {n: 1.0 if n == self.favourite else 0.0 for n in names}

    def vectors(self, names):
        return self.base.vectors(names)


@pytest.mark.llm
@pytest.mark.neo4j
def test_the_configured_relation_retriever_prefilters_the_grammar(ohio, local_llm):
    from sgr.core.types import Question
    from sgr.methods.sgr.answerer import SGRAnswerer, config_from_options

    cfg = config_from_options("sgr", {"exemplars": False, "max_grammar_paths": 1})
    for favourite, kept in ((CAPITAL, (IN, CAPITAL)), (HOLDER, (REPS, HOLDER))):
        res = SGRAnswerer(ohio, local_llm, cfg, retriever=_Prefers(ohio, favourite)).run(
            Question(id="q", text="who represents Ohio", topic_entities=["Ohio"]))
        assert [p.relations for p in res.schema.model_paths] == [kept]  # the one path the retriever kept
