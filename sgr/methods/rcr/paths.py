"""RCR's relation-path stage (§4.2): the prompts, the grammars that constrain the reply to retrieved relations, and
the worked examples of training questions. Two prompt formats (``RCRConfig.path_prompt``):

* ``rcr`` — the relation-path prompt of RCR App. A.3 (Figure 3), its reply ``(r1, r2)`` lines under
  :func:`relation_path_grammar`, with the nearest training questions as worked examples in that same format
  (:class:`PathExamplePool`);
* ``schema`` — SGR's schema prompt (:func:`sgr.methods.sgr.prompts.schema_prompt`), its reply ``path: r1 > r2`` lines
  under :func:`schema_path_grammar`: the prompt the shipped path generator (and any ``sgr llm tune`` model) was
  tuned on, so RCR asks tuned weights what they learnt to answer.

Two grammars for the reply (``RCRConfig.path_grammar``): ``relations`` admits any path over the retrieved candidate
relations (RCR §4.2); ``graph`` admits only the relation paths that exist from the linked topics, the ones the
retriever ranks first, as SGR decodes its schema call (:func:`graph_schema_paths`; schema format only), as deep as
SGR goes for the question (``path_depth``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from sgr.core.errors import ConfigError
from sgr.core.text import gbnf_literal

#: how the relation-path stage asks (``RCRConfig.path_prompt``)
PATH_PROMPTS = ("auto", "rcr", "schema")
#: what the path reply may hold (``RCRConfig.path_grammar``)
PATH_GRAMMARS = ("auto", "relations", "graph")
#: how deep the graph grammar's paths go (``RCRConfig.path_depth``)
PATH_DEPTHS = ("question", "max")

#: The relation-path prompt of RCR App. A.3 (Figure 3), verbatim; ``{paths_line}`` is the one addition needed to
#: get several paths from one call without beam search.
RELATION_PATH_PROMPT = (
    "Please generate a valid relation path that connects the question entity to potential answer entities "
    "using only the provided candidate relations.\n"
    "\n"
    "Question: {question}\n"
    "Question Entity: {entity}\n"
    "Candidate Relations: ({relations})\n"
    "\n"
    "Requirements:\n"
    "- Only use relations from the candidate set.\n"
    "- Do not invent new relations.\n"
    "- Prefer shorter and semantically coherent paths.\n"
    "- Return the final path as a list of relations in order, e.g., (relation1, relation2, relation3).\n"
    "{paths_line}"
)
PATHS_LINE = "- Give up to {beam} different paths, one per line, the most likely first.\n"


def check_option(name: str, value: str, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices``; else a one-line ConfigError naming RCR's option ``name``."""
    if value not in choices:
        raise ConfigError(f"rcr: option {name} must be one of {', '.join(choices)}, not {value!r}")
    return value


# ---------------------------------------------------------------------------------------------
# stage 2: relation paths
# ---------------------------------------------------------------------------------------------
def relation_path_grammar(relations: Sequence[str], max_hops: int = 3, max_paths: int = 4) -> str:
    """GBNF admitting 1..``max_paths`` lines ``(r1, …, rl)`` with 1 ≤ l ≤ ``max_hops``, each ``ri`` one of
    ``relations`` (the retrieved candidates): the model cannot write a relation that was not retrieved."""
    rels = list(dict.fromkeys(r for r in relations if r))
    if not rels:
        raise ValueError("relation_path_grammar needs at least one relation")
    if max_hops < 1 or max_paths < 1:
        raise ValueError("max_hops and max_paths must be at least 1")
    tail = ""
    for _ in range(max_hops - 1):
        tail = f'(", " rel {tail})?' if tail else '(", " rel)?'
    more = ""
    for _ in range(max_paths - 1):
        more = f'("\\n" path {more})?' if more else '("\\n" path)?'
    lines = [f"root ::= path {more}".rstrip(),
             f'path ::= "(" rel {tail} ")"' if tail else 'path ::= "(" rel ")"',
             "rel ::= " + " | ".join(gbnf_literal(r) for r in rels)]
    return "\n".join(lines) + "\n"


_PAREN = re.compile(r"\(([^()]*)\)")


def parse_relation_paths(text: str, allowed: Sequence[str], max_hops: int = 3) -> list[tuple[str, ...]]:
    """Relation paths in a reply: every ``( … )`` group (or bare line) split at commas; relations must be in
    ``allowed`` (quotes and blanks stripped); a path with any unknown relation is dropped; duplicates removed."""
    ok = set(allowed)
    groups = _PAREN.findall(text) or [ln for ln in text.splitlines() if ln.strip()]
    out: list[tuple[str, ...]] = []
    for g in groups:
        rels = tuple(r.strip().strip("\"'`[] ") for r in g.split(",") if r.strip().strip("\"'`[] "))
        if rels and len(rels) <= max_hops and all(r in ok for r in rels) and rels not in out:
            out.append(rels)
    return out


def path_messages(question: str, entity: str, candidates: Sequence[str], beam: int,
                  examples: Sequence[tuple[str, str, Sequence[str], Sequence[Sequence[str]]]] = ()
                  ) -> list[BaseMessage]:
    """The A.3 prompt for ``question``, preceded by worked examples ``(question, entity, candidates, gold paths)``."""
    paths_line = PATHS_LINE.format(beam=beam) if beam > 1 else ""
    msgs: list[BaseMessage] = []
    for q, e, cands, paths in examples:
        msgs.append(HumanMessage(RELATION_PATH_PROMPT.format(question=q, entity=e, relations=", ".join(cands),
                                                             paths_line=paths_line)))
        msgs.append(AIMessage("\n".join("(" + ", ".join(p) + ")" for p in list(paths)[:beam])))
    msgs.append(HumanMessage(RELATION_PATH_PROMPT.format(question=question, entity=entity,
                                                         relations=", ".join(candidates), paths_line=paths_line)))
    return msgs


def schema_path_grammar(relations: Sequence[str], max_hops: int = 3, max_paths: int = 4) -> str:
    """GBNF for SGR's schema reply (:func:`sgr.methods.sgr.prompts.schema_target`): 1..``max_paths`` lines
    ``path: r1 > … > rl`` with 1 ≤ l ≤ ``max_hops``, each ``ri`` one of ``relations`` (the retrieved candidates)."""
    from sgr.methods.sgr.prompts import PATH_PREFIX, PATH_SEPARATOR

    rels = list(dict.fromkeys(r for r in relations if r))
    if not rels:
        raise ValueError("schema_path_grammar needs at least one relation")
    if max_hops < 1 or max_paths < 1:
        raise ValueError("max_hops and max_paths must be at least 1")
    sep = gbnf_literal(PATH_SEPARATOR)
    tail = ""
    for _ in range(max_hops - 1):
        tail = f"({sep} rel {tail})?" if tail else f"({sep} rel)?"
    more = ""
    for _ in range(max_paths - 1):
        more = f'("\\n" path {more})?' if more else '("\\n" path)?'
    return "\n".join([f"root ::= path {more}".rstrip(), f"path ::= {gbnf_literal(PATH_PREFIX)} rel {tail}".rstrip(),
                      "rel ::= " + " | ".join(gbnf_literal(r) for r in rels)]) + "\n"


def schema_relation_paths(llm: Any, question: str, topics: Sequence[str], candidates: Sequence[str],
                          config: Any, shots: Sequence[Any] = ()) -> tuple[list[tuple[str, ...]], str]:
    """The relation-path call in SGR's schema format (:func:`sgr.methods.sgr.prompts.schema_prompt`, with
    ``shots`` worked examples): up to ``config.beam`` paths over ``candidates`` under :func:`schema_path_grammar`."""
    from sgr.methods.sgr.prompts import parse_schema_reply, schema_prompt

    grammar = schema_path_grammar(candidates, config.max_hops, config.beam)
    text = llm.complete(schema_prompt(question, topics, shots), stage="rcr-paths", grammar=grammar,
                        max_tokens=config.path_tokens)
    ok = set(candidates)
    paths = [p for p in parse_schema_reply(text)[0] if len(p) <= config.max_hops and all(r in ok for r in p)]
    return paths[:config.beam], text


def grammar_depth(config: Any, question: str, topic: str | None) -> int:
    """The entity hops of the graph grammar's paths (``config.path_depth``): ``question`` — as deep as SGR goes for
    this question (:func:`sgr.methods.sgr.subgraph.question_depth`: two, or three when the hop model reads three),
    the depth at which SGR decodes the tuned weights' schema call, never beyond ``config.max_hops``; ``max`` —
    ``config.max_hops``. ConfigError for another value."""
    if check_option("path_depth", config.path_depth, PATH_DEPTHS) == "max":
        return config.max_hops
    from sgr.methods.sgr.config import ExpansionConfig
    from sgr.methods.sgr.subgraph import question_depth

    return min(config.max_hops, question_depth(ExpansionConfig(), question, topic))


def graph_schema_paths(llm: Any, store: Any, retriever: Any, question: str, topic_ids: Sequence[str],
                       topics: Sequence[str], config: Any,
                       shots: Sequence[Any] = ()) -> tuple[list[tuple[str, ...]], str]:
    """The relation-path call in SGR's schema format under SGR's graph grammar: only the relation paths that exist
    from ``topic_ids`` (:func:`sgr.methods.sgr.trie.relation_paths`, up to :func:`grammar_depth` entity hops), the
    ``config.graph_paths`` the retriever ranks first for the question (:func:`sgr.methods.sgr.trie.prefilter`), so
    every path walks to an end; up to ``config.beam`` of them, and the raw reply."""
    from sgr.methods.sgr.exemplars import mask_entity
    from sgr.methods.sgr.prompts import parse_schema_reply, schema_prompt
    from sgr.methods.sgr.trie import path_grammar, prefilter, relation_paths

    topic = topics[0] if topics else None
    depth = grammar_depth(config, question, topic)
    full = relation_paths(store, list(topic_ids), max_hops=depth, max_relations=2 * depth)
    if not len(full):
        return [], ""
    masked = mask_entity(question, topic)
    trie = prefilter(full, lambda names: retriever.score_of(masked, names), config.graph_paths)
    text = llm.complete(schema_prompt(question, topics, shots), stage="rcr-paths",
                        grammar=path_grammar(trie, config.beam, constraints=False), max_tokens=config.path_tokens)
    return [p for p in parse_schema_reply(text)[0] if p in trie][:config.beam], text


def uses_graph_grammar(path_grammar: str, schema_prompt: bool) -> bool:
    """Whether the path reply is decoded under the graph grammar (``path_grammar``: ``graph``, or ``auto`` with the
    schema prompt); ConfigError for an unknown value or ``graph`` without the schema prompt."""
    check_option("path_grammar", path_grammar, PATH_GRAMMARS)
    if path_grammar == "graph" and not schema_prompt:
        raise ConfigError("rcr: path_grammar graph needs the schema prompt (path_prompt schema, or tuned weights)")
    return path_grammar == "graph" or (path_grammar == "auto" and schema_prompt)


def uses_schema_prompt(path_prompt: str, model_name: str | None) -> bool:
    """Whether the path stage asks in SGR's schema format (``path_prompt``: ``schema``, or ``auto`` for tuned
    weights, :func:`sgr.llm.server.is_tuned`)."""
    from sgr.llm.server import is_tuned

    check_option("path_prompt", path_prompt, PATH_PROMPTS)
    return path_prompt == "schema" or (path_prompt == "auto" and bool(model_name) and is_tuned(model_name))


def generate_relation_paths(llm: Any, question: str, entity: str, candidates: Sequence[str], config: Any,
                            examples: Sequence[tuple[str, str, Sequence[str], Sequence[Sequence[str]]]] = ()
                            ) -> tuple[list[tuple[str, ...]], str]:
    """One LLM call (§4.2): up to ``config.beam`` relation paths over ``candidates`` under
    :func:`relation_path_grammar`; returns the parsed, de-duplicated paths and the raw reply."""
    msgs = path_messages(question, entity, candidates, config.beam, examples)
    grammar = relation_path_grammar(candidates, config.max_hops, config.beam)
    text = llm.complete(msgs, stage="rcr-paths", grammar=grammar, max_tokens=config.path_tokens)
    return parse_relation_paths(text, candidates, config.max_hops)[:config.beam], text


# ---------------------------------------------------------------------------------------------
# worked examples (training questions only)
# ---------------------------------------------------------------------------------------------
@dataclass
class PathExample:
    question: str
    entity: str
    paths: tuple[tuple[str, ...], ...]


class PathExamplePool:
    """Training questions with gold paths (WebQSP train, a MetaQA dev sample) whose relations all exist in the
    graph; :meth:`nearest` returns the most similar ones by frozen-embedding cosine (stand-in for §4.2.2's tuning)."""

    def __init__(self, examples: Sequence[PathExample], encoder: str = "minilm") -> None:
        self.examples = list(examples)
        self.encoder = encoder
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_shared_data(cls, vocabulary: set[str], metaqa_per_hop: int = 300, seed: int = 0) -> "PathExamplePool":
        from sgr.datasets import shared_data_dir
        from sgr.retrieval.supervision import read_metaqa, read_webqsp_paths

        root = shared_data_dir()
        out: list[PathExample] = []
        train = root / "webqsp" / "webqsp_train_paths.jsonl"
        if train.exists():
            for ex in read_webqsp_paths(train):
                paths = tuple(p for p in ex.paths if all(r in vocabulary for r in p))
                if paths:
                    out.append(PathExample(ex.question, "", paths))
        metaqa = root / "metaqa"
        if (metaqa / "1hop_dev.tsv").exists() and {"directed_by", "starred_actors"} <= vocabulary:
            raw: dict[str, str] = {}
            for hop in (1, 2, 3):
                for line in (metaqa / f"{hop}hop_dev.tsv").read_text(encoding="utf-8").splitlines():
                    text = line.split("\t", 1)[0]
                    m = re.search(r"\[([^\]]+)\]", text)
                    raw[re.sub(r"\[([^\]]+)\]", r"\1", text).strip()] = m.group(1) if m else ""
            for ex in read_metaqa(metaqa, "dev", (1, 2, 3), limit_per_hop=metaqa_per_hop, seed=seed):
                if all(r in vocabulary for r in ex.relations):
                    out.append(PathExample(ex.question, raw.get(ex.question, ""), ex.paths))
        return cls(out)

    def _embeddings(self) -> np.ndarray:
        from sgr.retrieval.training import embed

        with self._lock:
            if self._matrix is None:
                self._matrix = embed([e.question for e in self.examples], self.encoder) if self.examples \
                    else np.zeros((0, 384), dtype=np.float32)
            return self._matrix

    def nearest(self, question: str, k: int) -> list[PathExample]:
        if k <= 0 or not self.examples:
            return []
        from sgr.retrieval.training import embed

        sims = self._embeddings() @ embed([question], self.encoder)[0]
        return [self.examples[i] for i in np.argsort(-sims, kind="stable")[:k]]


