"""Training data for ``sgr llm tune``: SGR's schema-stage prompts and the replies it must learn.

Every example is built with :mod:`sgr.methods.sgr.prompts` (``SCHEMA_SYSTEM``, ``schema_user``, ``schema_target``),
the same functions SGR uses at answer time, from three sources:

* **WebQSP train** (``webqsp_train_paths.jsonl``): the question and its gold relation paths. The file names no topic
  entity, so the topic line reads ``(none)``. Paths through noise relations (``people.person.gender``,
  ``common.topic.notable_types`` …, which RoG's shortest-path extraction picks up) are dropped; at most
  ``max_paths`` paths, duplicates removed, the ones most similar to the question first (SGR's relation encoder).
* **MetaQA dev** (``{1,2,3}hop_dev.tsv`` + ``_qtype.txt``): the topic in brackets and the qtype's relation path
  (:func:`sgr.datasets.metaqa_relation_path`); a seeded sample of ``per_hop`` questions per hop.
* **A user dataset** with questions, topic entities and answers: the topic→answer shortest relation paths are
  computed in Neo4j (:func:`graph_paths`). A CVT node (``:CVT``, a Freebase compound value without a name) is not
  a hop of its own: a path's length counts named entities, so ``A -r1-> cvt -r2-> B`` is one hop, as in RoG's data.

Targets hold relation paths only (no constraint lines): SGR's constraints come from rules, not the model.

**Worked examples** (``examples`` > 0, :func:`add_worked_examples`): each prompt also shows the nearest *other*
training question with its path as an earlier user/assistant turn, exactly as SGR shows its worked example at
answer time (:meth:`sgr.methods.sgr.answerer.SGRAnswerer.worked_examples`), so the model learns when to follow the
example and when not to; the count is recorded in the provenance (``prompt_examples``) and SGR then sends as many.

**Never a test question**: :func:`drop_test_overlap` removes every example whose normalised question text equals
a test question's (WebQSP ``webqsp_mini.jsonl``, MetaQA ``*_test.tsv``, plus any extra test files) and reports
the count per source.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sgr.core.errors import ConfigError, InputError
from sgr.core.text import normalize
from sgr.core.types import Question
from sgr.datasets import load_dataset, read_metaqa, read_records, shared_data_dir
from sgr.graph.store import GraphStore, relation_text
from sgr.llm.finetune import ChatExample
from sgr.methods.sgr.exemplars import question_path_similarity
from sgr.methods.sgr.prompts import SCHEMA_SYSTEM, schema_target, schema_user
from sgr.retrieval.supervision import (CWQSplit, RelationExample, clean_paths, graph_paths,  # noqa: F401
                                       question_paths)


@dataclass
class TuneData:
    """Examples per source and what the overlap check removed; ``held_out`` examples always go to validation
    (model selection), never to training (CWQ dev's held-back base questions)."""

    examples: list[ChatExample]
    sources: dict[str, int] = field(default_factory=dict)
    overlap_removed: dict[str, int] = field(default_factory=dict)
    test_questions: int = 0
    prompt_examples: int = 0  # worked examples in each prompt
    held_out: list[ChatExample] = field(default_factory=list)
    splits: dict[str, dict] = field(default_factory=dict)  # how a source was split (CWQ: its bases)
    repeats: dict[str, int] = field(default_factory=dict)  # example id → times it is trained on (CWQ: cwq_repeat)


def example(qid: str, question: str, topics: Sequence[str], paths: Sequence[Sequence[str]]) -> ChatExample:
    """One (prompt, target) pair in SGR's schema format."""
    return ChatExample(id=qid, system=SCHEMA_SYSTEM, user=schema_user(question, topics), target=schema_target(paths))


def rank_paths(paths: Sequence[Sequence[str]], similarity: Sequence[float]) -> list[list[str]]:
    """Best first: the paths most similar to the question (``similarity[i]`` of ``paths[i]``; ties keep file order).

    RoG's ``ground_paths`` are every shortest topic→answer path, in no order of preference; the ones that say
    what the question asks sit among generic detours (``people.person.nationality > location.location.containedby``
    reaches the answer of a question about a university), so ranking them by how often they occur in the file
    taught the model those detours."""
    order = sorted(range(len(paths)), key=lambda i: -similarity[i])
    return [list(paths[i]) for i in order]


def path_text(path: Sequence[str]) -> str:
    """A relation path as words, for the sentence encoder (``a.b_c > d.e`` → ``a b c ; d e``)."""
    return " ; ".join(relation_text(r) for r in path)


def from_relation_examples(examples: Sequence[RelationExample]) -> list[ChatExample]:
    """Schema-stage examples of relation-retrieval examples that know their topics (CWQ dev, graph questions)."""
    return [example(e.id, e.question, e.topics, [list(p) for p in e.paths]) for e in examples]


def webqsp_train_examples(path: Path | None = None, max_paths: int = 3) -> list[ChatExample]:
    """Examples from WebQSP train questions with gold relation paths, the paths most similar to the question first
    (:func:`rank_paths`; questions left with no path are skipped)."""
    path = path or shared_data_dir() / "webqsp" / "webqsp_train_paths.jsonl"
    if not path.exists():
        raise InputError(f"{path}: not found (WebQSP train paths); set SGR_SHARED_DATA")
    records = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                records.append((str(rec["id"]), str(rec["question"]), clean_paths(rec.get("ground_paths") or [], 99),
                                rec.get("q_entity") or []))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{path}:{lineno}: not a {{id, question, ground_paths}} record ({exc})") from exc
    records = [r for r in records if r[2]]
    sims = question_path_similarity([q for _, q, _, _ in records], [ps for _, _, ps, _ in records], path_text)
    return [example(qid, question, topics, rank_paths(paths, sim)[:max_paths])
            for (qid, question, paths, topics), sim in zip(records, sims)]


def metaqa_dev_examples(per_hop: int | None = 500, seed: int = 0, folder: Path | None = None) -> list[ChatExample]:
    """Examples from MetaQA dev (a seeded sample of ``per_hop`` questions per hop; None = all)."""
    folder = folder or shared_data_dir() / "metaqa"
    out = []
    for hop in (1, 2, 3):
        path = folder / f"{hop}hop_dev.tsv"
        if not path.exists():
            raise InputError(f"{path}: not found (MetaQA dev); set SGR_SHARED_DATA")
        questions = [q for q in read_metaqa(path) if q.gold_paths]
        if per_hop is not None and per_hop < len(questions):
            idx = sorted(random.Random(seed + hop).sample(range(len(questions)), per_hop))
            questions = [questions[i] for i in idx]
        out += [example(q.id, q.text, q.topic_entities, q.gold_paths) for q in questions]
    return out


# -- shortest relation paths in Neo4j (sgr.retrieval.supervision.graph_paths) -------------------------
def dataset_examples(store: GraphStore, spec: str, split: str | None = None, max_hops: int = 2,
                     max_paths: int = 3) -> tuple[list[ChatExample], int]:
    """Examples from a user dataset (name or file with questions, topic entities and answers); paths come from
    the graph. Returns ``(examples, questions without any path)``."""
    ds = load_dataset(spec, split=split)
    out, missing = [], 0
    for q in ds.questions:
        paths = question_paths(store, q.topic_entities, q.answers, max_hops=max_hops, max_paths=max_paths)
        if paths:
            out.append(example(q.id, q.text, q.topic_entities, paths[:max_paths]))
        else:
            missing += 1
    return out, missing


# -- never a test question ---------------------------------------------------------------------
def question_key_text(text: str) -> str:
    """A question as the exemplar pool stores it (MetaQA's topic brackets removed)."""
    return text.replace("[", "").replace("]", "")


def question_key(text: str) -> str:
    """The form questions are compared in (brackets of MetaQA topics removed, :func:`sgr.core.text.normalize`)."""
    return normalize(question_key_text(text))


def default_test_files() -> list[Path]:
    base = shared_data_dir()
    files = [base / "webqsp" / "webqsp_mini.jsonl"] + [base / "metaqa" / f"{h}hop_test.tsv" for h in (1, 2, 3)]
    return [f for f in files if f.exists()]


def read_test_questions(files: Sequence[Path]) -> list[Question]:
    out: list[Question] = []
    for f in files:
        out += read_metaqa(f) if f.suffix == ".tsv" else read_records(f)[1]
    return out


def topic_of(ex: ChatExample) -> str | None:
    """The first topic entity of an example's user turn (None for ``(none)``)."""
    for line in ex.user.splitlines():
        if line.startswith("Topic:"):
            first = line.split(":", 1)[1].split("|")[0].strip()
            return None if first in ("", "(none)") else first
    return None


def add_worked_examples(examples: Sequence[ChatExample], n: int) -> list[ChatExample]:
    """``examples`` with the ``n`` nearest other training questions as worked examples (``ChatExample.shots``),
    chosen as SGR chooses them at answer time: :class:`sgr.methods.sgr.exemplars.ExemplarPool` over the shared
    training data, restricted to the relations of these examples' own targets (the graph's vocabulary at answer
    time: WebQSP questions get WebQSP train examples, MetaQA questions MetaQA dev ones), never the question itself."""
    from sgr.methods.sgr.exemplars import ExemplarPool
    from sgr.methods.sgr.prompts import parse_schema_reply

    if n <= 0 or not examples:
        return list(examples)
    vocabulary = {r for e in examples for p in parse_schema_reply(e.target)[0] for r in p}
    pool = ExemplarPool.from_shared_data(vocabulary)
    out = []
    for e in examples:
        near = pool.nearest(question_key_text(question_of(e)), n, topic_of(e))
        out.append(dataclasses.replace(e, shots=tuple(ex.worked().turns() for ex, _ in near)))
    return out


def question_of(ex: ChatExample) -> str:
    """The question text of an example's user turn."""
    first = ex.user.splitlines()[0]
    return first.split(":", 1)[1].strip() if first.startswith("Question:") else first


def drop_test_overlap(examples: Sequence[ChatExample], test_keys: set[str]) -> tuple[list[ChatExample], int]:
    """Examples whose question is not a test question, and how many were removed."""
    kept = [e for e in examples if question_key(question_of(e)) not in test_keys]
    return kept, len(examples) - len(kept)


def build(*, webqsp: bool = True, metaqa_per_hop: int | None = 500, user_examples: Sequence[ChatExample] = (),
          test_files: Sequence[Path] | None = None, seed: int = 0, webqsp_sample: int | None = None,
          examples: int = 0, cwq: CWQSplit | None = None, graph_examples: Sequence[ChatExample] = (),
          cwq_repeat: int = 1) -> TuneData:
    """All sources, test questions removed (counts per source in ``overlap_removed``); ``webqsp_sample`` keeps a
    seeded sample of that many WebQSP train questions (None: all); ``examples`` worked examples per prompt
    (:func:`add_worked_examples`, per source); ``cwq``: CWQ dev's training part (its held-back part goes to
    ``held_out``), each of its training examples trained on ``cwq_repeat`` times (:func:`split_data`: the compositions
    are a seventh of the data); ``graph_examples``: questions written from the graph (``--from-graph``)."""
    if cwq_repeat < 1:
        raise ConfigError(f"cwq_repeat must be at least 1, got {cwq_repeat}")
    tests = read_test_questions(default_test_files() if test_files is None else test_files)
    keys = {question_key(q.text) for q in tests}
    data = TuneData(examples=[], test_questions=len(tests), prompt_examples=max(examples, 0))
    sources: list[tuple[str, Sequence[ChatExample], Sequence[ChatExample]]] = []
    if webqsp:
        wq = webqsp_train_examples()
        if webqsp_sample is not None and webqsp_sample < len(wq):
            wq = [wq[i] for i in sorted(random.Random(seed).sample(range(len(wq)), webqsp_sample))]
        sources.append(("webqsp_train", wq, ()))
    if metaqa_per_hop != 0:
        sources.append(("metaqa_dev", metaqa_dev_examples(metaqa_per_hop, seed=seed), ()))
    if cwq is not None:
        sources.append(("cwq_dev", from_relation_examples(cwq.train), from_relation_examples(cwq.held)))
        data.splits["cwq_dev"] = cwq.info
    if user_examples:
        sources.append(("dataset", user_examples, ()))
    if graph_examples:
        sources.append(("graph", graph_examples, ()))
    for name, exs, held in sources:
        kept, removed = drop_test_overlap(exs, keys)
        held_kept, held_removed = drop_test_overlap(held, keys)
        data.examples += add_worked_examples(kept, examples)
        data.held_out += add_worked_examples(held_kept, examples)
        data.sources[name] = len(kept)
        if held:
            data.sources[f"{name}_held_out"] = len(held_kept)
        data.overlap_removed[name] = removed + held_removed
        if name == "cwq_dev" and cwq_repeat > 1:
            data.repeats.update((e.id, cwq_repeat) for e in kept)
    return data


def path_accuracy(examples: Sequence[ChatExample], replies: Sequence[str]) -> dict[str, float]:
    """``exact``: share of replies whose first path is the target's first path; ``any``: first path among the
    target's paths; ``parsed``: replies with at least one path line."""
    from sgr.methods.sgr.prompts import parse_schema_reply

    exact = hit = parsed = 0
    for ex, reply in zip(examples, replies):
        gold, _ = parse_schema_reply(ex.target)
        got, _ = parse_schema_reply(reply)
        parsed += bool(got)
        exact += bool(got and gold and got[0] == gold[0])
        hit += bool(got and got[0] in gold)
    n = max(len(examples), 1)
    return {"exact": exact / n, "any": hit / n, "parsed": parsed / n, "n": len(examples)}


# -- the whole run: data → train → validate → export ----------------------------------------------
NO_GRAPH = "no-graph"  # the key of a model tuned on file data only (valid for any loaded graph)


def split_data(data: TuneData, cfg) -> tuple[list[ChatExample], list[ChatExample]]:  # noqa: ANN001 - TuneConfig
    """``(train, validation)``: the seeded split of :func:`sgr.llm.finetune.split_examples`, the repeated examples'
    copies appended to train (``data.repeats``), every held-out example added to validation, the whole validation
    set in one seeded order (so the first ``eval_n`` probe questions mix the sources)."""
    from sgr.llm import finetune as ft

    train, val = ft.split_examples(data.examples, cfg)
    train += [e for e in train for _ in range(data.repeats.get(e.id, 1) - 1)]  # after the split: none in validation
    if data.held_out:
        val = val + list(data.held_out)
        random.Random(cfg.seed).shuffle(val)
    return train, val


@dataclass
class Trained:
    """A tuned model in memory (weights folded in), its training figures, and the probe replies before and after."""

    model: object
    result: object  # sgr.llm.finetune.TuneResult
    base_replies: list[str]
    replies: list[str]
    device: str
    generation_seconds: float
    there: dict | None = None  # the seconds of a bundle run on the other machine


def _train_here(base: Path, cfg, data: TuneData, train_ex, val_ex, probe, out_dir: Path, log,  # noqa: ANN001
                show_progress: bool) -> Trained:
    """Train on this machine (resumable); the untuned replies are cached beside the checkpoints."""
    import time

    from sgr.llm import finetune as ft

    device = ft.resolve_device(cfg.device)
    log(f"tuning {base.name} on {len(data.examples)} examples {data.sources} (test overlap removed: "
        f"{data.overlap_removed}); device {device}; method {cfg.method}; checkpoints in {out_dir}")
    model, tok = ft.load_base(base, device, threads=cfg.threads)
    base_file = out_dir / "base_replies.json"
    ids = [e.id for e in probe]
    cached = json.loads(base_file.read_text()) if base_file.exists() else {}
    if cached.get("ids") != ids:
        log(f"untuned model on {len(probe)} validation questions …")
        cached = {"ids": ids, "replies": ft.generate(model, tok, probe, max_new_tokens=40)}
        base_file.write_text(json.dumps(cached))
    result = ft.train(model, tok, train_ex, val_ex, cfg, out_dir, log=log, show_progress=show_progress)
    g0 = time.time()
    replies = ft.generate(model, tok, probe, max_new_tokens=40)
    return Trained(model, result, cached["replies"], replies, device, time.time() - g0)


def _trained_there(bundle: Path, out: Path, base: Path, cfg, val_ex, probe, log) -> Trained:  # noqa: ANN001
    """The weights and figures a bundle run wrote to ``out``, folded into the base model here."""
    from sgr.llm import bundle as remote
    from sgr.llm import finetune as ft

    remote.check_base(bundle, base)
    trained = remote.read(out)
    res = trained.result
    if res["validation_ids"] != [e.id for e in val_ex] or res["probe_ids"] != [e.id for e in probe]:
        raise ConfigError(f"{out}: trained on another split than these options make (same data, seed, "
                          "val_fraction and eval_n as the bundle?)")
    cfg = ft.TuneConfig(**{**res["config"], "device": cfg.device, "threads": cfg.threads})
    model, _ = ft.load_base(base, "cpu", threads=cfg.threads)
    model = remote.apply(model, cfg, trained.state)
    device = f"{res['device']} ({res['device_name']})"
    log(f"weights trained on {device} read from {out}")
    return Trained(model, ft.TuneResult(state_path=out, config=cfg, **res["result"]), res["base_replies"],
                   res["replies"], device, res["seconds"]["generation_per_question"] * max(len(probe), 1),
                   there=res["seconds"])


def run(data: TuneData, cfg, graph_version: str, *, eval_n: int = 100, log=print,  # noqa: ANN001
        show_progress: bool = True, bundle: Path | None = None, from_bundle: Path | None = None) -> dict:
    """Tune SGR's schema model on ``data`` (resumable), measure validation path accuracy of the base and the
    tuned model (greedy, unconstrained, on the first ``eval_n`` validation questions), export the merged GGUF to
    ``SGR_HOME/tune/<graph version>/model.gguf`` and write its provenance (``model.json``). Returns the provenance.

    ``bundle``: write a tuning bundle there instead of training (:mod:`sgr.llm.bundle`) and return its manifest;
    with ``from_bundle`` as well, take the weights and figures that the bundle's run wrote to ``from_bundle``."""
    import time

    from sgr.llm import bundle as remote
    from sgr.llm import finetune as ft
    from sgr.llm.gguf_export import write_merged, write_provenance
    from sgr.llm.server import model_path

    t0 = time.time()
    base = model_path()
    train_ex, val_ex = split_data(data, cfg)
    probe = val_ex[:eval_n]
    summary = {"sources": data.sources, "overlap_removed_test_questions": data.overlap_removed,
               "test_questions_checked": data.test_questions, "prompt_examples": data.prompt_examples,
               "held_out": len(data.held_out), "splits": data.splits,
               "repeated": {"examples": len(data.repeats), "times": sorted(set(data.repeats.values()))}}
    if bundle is not None and from_bundle is None:
        path = remote.write(bundle, base, train_ex, val_ex, cfg, eval_n=eval_n, data=summary)
        log(f"tuning bundle: {bundle} ({len(train_ex)} train, {len(val_ex)} validation examples); train it with "
            f"`python -m sgr.llm.bundle {bundle} OUT`, then `sgr llm tune --bundle {bundle} --from-bundle OUT`")
        return json.loads(path.read_text())
    out_dir = ft.tune_dir(graph_version)
    if from_bundle is not None:
        if bundle is None:
            raise ConfigError("--from-bundle needs --bundle: the bundle folder its weights were trained from")
        t = _trained_there(bundle, from_bundle, base, cfg, val_ex, probe, log)
    else:
        t = _train_here(base, cfg, data, train_ex, val_ex, probe, out_dir, log, show_progress)
    cfg, result = t.result.config, t.result
    base_acc = path_accuracy(probe, t.base_replies)
    tuned_acc = path_accuracy(probe, t.replies)
    log(f"path accuracy on {len(probe)} held-back questions: untuned {base_acc}, tuned {tuned_acc}")
    split = 0 if cfg.method == "lora" else len(t.model.model.layers) - cfg.top_layers
    weights = write_merged(base, out_dir / "model.gguf", ft.top_state(t.model, split),
                           metadata={"sgr.graph_version": graph_version, "sgr.task": "sgr schema stage"},
                           matrix_type="q8_0" if cfg.method == "lora" else "f16")
    from dataclasses import asdict

    prov = {
        "weights": str(weights), "base_model": str(base), "graph_version": graph_version, "device": t.device,
        "prompt_examples": data.prompt_examples,
        "data": {**{k: v for k, v in summary.items() if k != "prompt_examples"}, "train": result.n_train,
                 "validation": result.n_val, "validation_ids": [e.id for e in val_ex]},
        "config": asdict(cfg), "steps": result.steps, "epochs_run": result.epochs_run,
        "stopped_early": result.stopped_early,
        "validation": {"loss_before": result.base_val_loss, "loss_per_epoch": result.val_losses,
                       "best_loss": result.best_val_loss, "path_accuracy_base": base_acc,
                       "path_accuracy_tuned": tuned_acc},
        "examples": [{"user": e.user, "target": e.target, "tuned": r, "base": b}
                     for e, r, b in list(zip(probe, t.replies, t.base_replies))[:5]],
        "seconds": {"total": time.time() - t0, "tune": result.seconds, "lower_layer_cache": result.cache_seconds,
                    "generation_per_question": t.generation_seconds / max(len(probe), 1)},
        "train_tokens_per_s": result.train_tokens_per_s, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if t.there is not None:
        prov["trained_by_bundle"] = {"bundle": str(bundle), "out": str(from_bundle), "seconds_there": t.there}
    write_provenance(weights, prov)
    log(f"tuned model: {weights} (provenance {weights.with_suffix('.json')})")
    return prov


def tune_from_options(*, dataset: str | None = None, split: str | None = None, webqsp: bool = True,
                      webqsp_sample: int | None = None, metaqa_per_hop: int | None = 500, examples: int = 0,
                      graph_version: str | None = None, eval_n: int = 100, log=print, bundle: Path | None = None,
                      from_bundle: Path | None = None, cwq: bool = False, cwq_held_fraction: float = 0.15,
                      from_graph: int = 0, from_graph_hops: int = 3, cwq_repeat: int = 1, **config) -> dict:  # noqa: ANN001
    """``sgr llm tune``: build the data (the user dataset's paths, CWQ dev's paths and the graph's own questions
    from the running store), key the run by the store's graph version (``no-graph`` when only file data is used and
    no store answers), run :func:`run`."""
    from sgr.core.errors import Neo4jUnavailable
    from sgr.llm.finetune import TuneConfig

    valid = set(TuneConfig.__dataclass_fields__)
    unknown = sorted(set(config) - valid)
    if unknown:
        raise ConfigError(f"unknown tuning option {unknown[0]!r}; valid: {', '.join(sorted(valid))}")
    cfg = TuneConfig(**{k: v for k, v in config.items() if v is not None})
    user: list[ChatExample] = []
    graph: list[ChatExample] = []
    cwq_split = None
    version = graph_version
    store = None
    try:
        store = GraphStore.from_settings()
        store.verify()
        version = version or store.graph_version()
        if dataset:
            user, missing = dataset_examples(store, dataset, split=split)
            log(f"{dataset}: {len(user)} questions with graph paths, {missing} without any")
        if cwq:
            from sgr.retrieval.supervision import cwq_dev_examples

            cwq_split = cwq_dev_examples(store, held_fraction=cwq_held_fraction, seed=cfg.seed)
            info = cwq_split.info
            log(f"CWQ dev: {info['train_questions']} training and {info['held_questions']} held-back questions "
                f"({len(info['train_bases'])} / {len(info['held_bases'])} base questions), {info['without_path']} "
                f"without a graph path, {info['skipped_on_webqsp_test']} on WebQSP test questions skipped")
        if from_graph:
            from sgr.retrieval.graph_questions import describe, graph_questions

            written = graph_questions(store, from_graph, max_hops=from_graph_hops, seed=cfg.seed)
            graph = from_relation_examples(written)
            log(f"{len(graph)} questions written from the graph, e.g. " + " | ".join(describe(written)))
    except Neo4jUnavailable:
        if dataset or cwq or from_graph:
            raise
        version = version or NO_GRAPH
        log("no graph store answers: the run is keyed 'no-graph' (file data only)")
    finally:
        if store is not None:
            store.close()
    data = build(webqsp=webqsp, webqsp_sample=webqsp_sample, metaqa_per_hop=metaqa_per_hop, user_examples=user,
                 seed=cfg.seed, examples=examples, cwq=cwq_split, graph_examples=graph, cwq_repeat=cwq_repeat)
    return run(data, cfg, version, eval_n=eval_n, log=log, bundle=bundle, from_bundle=from_bundle)
