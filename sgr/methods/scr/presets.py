"""Which questions SCR trains, validates and is tested on, per dataset, and the G_q settings for each.

* ``metaqa`` — MetaQA has no train split here: training questions are a fixed-seed sample of each hop's
  **dev** file (``train_per_hop`` + ``val_per_hop`` drawn together with ``random.Random(seed)``, the first
  ``val_per_hop`` held out for validation); tests draw from the **test** files
  (:func:`sgr.datasets.load_dataset` with ``sample``/``seed``). G_q: 3 hops (the longest MetaQA question).
* ``webqsp`` — the slice has only WebQSP's test questions: :func:`sgr.methods.scr.data.split_of` splits them by a
  fixed hash of the question id, 80 % train / 20 % held-out test; validation is 10 % of the train part by a
  second hash (salt ``scr-val``). G_q: 2 hops, CVT-aware (a walk through a CVT takes two steps, so
  ``max_steps`` = 4).
* any other value is a question file (:func:`sgr.datasets.load_dataset`), split by the same hashes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sgr.datasets import load_dataset
from sgr.methods.scr.data import SubgraphConfig, split_of
from sgr.core.types import Question


@dataclass(frozen=True)
class Preset:
    subgraph: SubgraphConfig
    max_steps: int


PRESETS: dict[str, Preset] = {
    "metaqa": Preset(SubgraphConfig(hops=3, max_nodes=2000, hub_degree=100, topic_cap=1000, node_cap=100), 3),
    "webqsp": Preset(SubgraphConfig(hops=2, max_nodes=2000, hub_degree=300, topic_cap=1000, node_cap=300), 4),
}
DEFAULT_PRESET = Preset(SubgraphConfig(hops=2), 4)


def preset(dataset: str) -> Preset:
    return PRESETS.get(dataset, DEFAULT_PRESET)


def training_questions(dataset: str, train_per_hop: int = 1000, val_per_hop: int = 100,
                       seed: int = 0) -> tuple[list[Question], list[Question]]:
    """(train, validation) questions; for WebQSP/files the per-hop sizes cap the hashed parts (0 = all)."""
    if dataset == "metaqa":
        train: list[Question] = []
        val: list[Question] = []
        for hops in (1, 2, 3):
            qs = load_dataset(f"metaqa-{hops}hop", "dev").questions
            picked = random.Random(seed + hops).sample(qs, min(len(qs), train_per_hop + val_per_hop))
            val.extend(picked[:val_per_hop])
            train.extend(picked[val_per_hop:])
        return train, val
    qs = load_dataset(dataset).questions
    pool = [q for q in qs if split_of(q.id) == "train"]
    val = [q for q in pool if split_of(q.id, 0.1, salt="scr-val") == "test"]
    train = [q for q in pool if split_of(q.id, 0.1, salt="scr-val") == "train"]
    if train_per_hop:
        train = train[:train_per_hop]
    if val_per_hop:
        val = val[:val_per_hop]
    return train, val


def test_questions(dataset: str, per_hop: int = 1000, seed: int = 0,
                   subsample: int | None = None) -> dict[str, list[Question]]:
    """Test questions grouped as reported: MetaQA per hop (``1hop`` …), WebQSP's held-out part as ``all``.

    ``subsample`` keeps that many of each group, drawn with ``random.Random(seed + 1)`` and kept in order
    (a smaller run over questions whose G_q are already cached).
    """
    if dataset == "metaqa":
        groups = {f"{h}hop": load_dataset(f"metaqa-{h}hop", "test", sample=per_hop or None, seed=seed).questions
                  for h in (1, 2, 3)}
    else:
        qs = [q for q in load_dataset(dataset).questions if split_of(q.id) == "test"]
        groups = {"all": qs[:per_hop] if per_hop else qs}
    if subsample:
        for name, qs in groups.items():
            if len(qs) > subsample:
                keep = set(random.Random(seed + 1).sample(range(len(qs)), subsample))
                groups[name] = [q for i, q in enumerate(qs) if i in keep]
    return groups
