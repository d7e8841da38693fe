"""Helpers shared by tests of both tiers (import as ``from tests.helpers import …``; pyproject puts the repository
root on ``sys.path`` for pytest).

``scripted_llm`` is the ONE scripted fake chat model of the test suite: an :class:`sgr.llm.client.LLM` over LangChain's
``FakeListChatModel`` that answers the given replies in order. Unit tests may use it; every LLM stage also has a test
against the real local model (``local_llm`` fixture, tests/llm_fixtures.py).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def scripted_llm(*replies: str, logprobs: bool = False, name: str = "fake"):
    """An :class:`sgr.llm.client.LLM` over a fake chat model that answers ``replies`` in order (no cache).

    ``logprobs=True`` makes the client ask for log-probabilities; the fake model returns none, so code that needs them
    must fall back (that is what tests of the fallback check).
    """
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from sgr.llm.client import LLM

    return LLM(FakeListChatModel(responses=list(replies)), name=name, logprobs=logprobs)


def compiled_run(store, question, **options):  # -> SGRResult
    """SGR's full trace of ``question`` under ``sgr-compiled`` (no LLM) with the method ``options``."""
    from sgr.methods.sgr.answerer import SGRAnswerer
    from sgr.methods.sgr.config import config_from_options

    return SGRAnswerer(store, None, config_from_options("sgr-compiled", options)).run(question)


def hand_graph(store, names: dict[str, str], triples: list[tuple[str, str, str]]):  # -> GraphStore
    """Write a hand-built graph into ``store``: ``names`` (MID → name) are named entities, ``triples`` are
    (subject MID, relation, object MID); a MID without a name becomes a CVT node."""
    from loaders.writer import GraphBatch, write_graph

    b = GraphBatch()
    for mid, name in names.items():
        b.add_entity(mid, name)
    for s, r, o in triples:
        b.add_triple(s, r, o)
    write_graph(store, b)
    return store


def node_ids(value: object) -> set[str]:
    """Entity ids in query rows (paths come back as lists of node property maps and relationship tuples)."""
    if isinstance(value, dict):
        return ({value["id"]} if isinstance(value.get("id"), str) else set()) | node_ids(list(value.values()))
    if isinstance(value, (list, tuple)):
        return set().union(*(node_ids(v) for v in value)) if value else set()
    return set()


def check_gbnf(grammar: str) -> None:
    """Raise ``ValueError`` when llama.cpp's own parser cannot parse ``grammar`` (needs llama-cpp-python and the
    packaged model's vocabulary, loaded vocabulary-only): the tests check every grammar builder with it."""
    from sgr.llm.server import model_path

    import llama_cpp

    vocab = _vocab_only_model(str(model_path()))
    sampler = llama_cpp.llama_sampler_init_grammar(vocab._model.vocab, grammar.encode("utf-8"), b"root")
    if not sampler:
        raise ValueError("llama.cpp could not parse the grammar (see its message on stderr)")
    llama_cpp.llama_sampler_free(sampler)


_VOCAB_MODELS: dict[str, object] = {}


def _vocab_only_model(path: str):  # -> llama_cpp.Llama
    import llama_cpp

    if path not in _VOCAB_MODELS:
        _VOCAB_MODELS[path] = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    return _VOCAB_MODELS[path]
