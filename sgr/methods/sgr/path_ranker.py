"""s(P) learned on dev questions: a path ranker with one hidden layer over the terms G_q already computes.

SGR scores a schema path by relevance, entity alignment and constraint satisfaction (§3.1.2); how much each term
weighs — and, above all, how much a longer path must earn before it beats the one-hop path that reaches the entity
a compositional question only describes — was a hand-set sum (``w_rel``, ``w_align``, ``w_con``, ``w_len``). The ranker
learns how the terms combine, per question shape, from dev questions whose gold answers say which schema paths are
right:

    s(P) = σ(a · v · tanh(W φ(P, q) + c) + b)        (:class:`sgr.core.mlp.MLPScorer`)

W, c, v are fitted so that a right path ranks first among its question's paths (the listwise softmax over each
question's paths), then a and b so that s(P) reads as the chance that P reaches a gold answer. A linear score
(σ(w·φ + b)) was the first ranker: its relation-score weights went to about zero (a relation that matches the
question is the answer path of a one-hop question and the trap of a composition), and MetaQA 1-hop fell below the
hand-set sum; the hidden layer lets the weight of a term depend on the hop prior and the path's shape
(``bench/experiments/path-ranker.md`` has both side by side).

φ (:data:`FEATURES`) holds the terms of :meth:`sgr.methods.sgr.subgraph.SubgraphBuilder` (relation scores: mean, first,
last, weakest; cos(q, text(P)); the order of the model's relations; alignment with the other linked entities; an end
named in the question; the type check), the path's shape (entity hops, CVT steps) and P(h(P) | q) of the hop model
(:mod:`sgr.retrieval.hops`), the size of its answer set, whether it ends on another linked entity, and whether it ends
on the kind of entity the question only describes (``described_end``/``described_sim``: "where did *the author* that
published X grow up?" — composition's bridge, :func:`sgr.core.lexicon.described_nouns`), and how strongly a word of the
question goes with its last relation in dev questions' gold paths (``lex_last``: "what did … *do*" → ``profession``,
:mod:`sgr.methods.sgr.word_relations`), and whether its last relation walks back the one before it (``walks_back``: to
the others around one node, "films that share a director with X"; either name of an inverse pair) where the question
has a word that asks for others or not (``walks_back_unasked``, :func:`sgr.core.lexicon.asks_for_others`: Germany's
currency's *other countries* answer no question about Germany's currency). The target is whether the path reaches a
gold answer. ``bench/path_ranker.py`` builds the examples from CWQ dev (on WebQSP train bases) and MetaQA dev, fits the
weights (scikit-learn), checks them on held-out dev questions and writes ``sgr/assets/path_ranker.json``; without that
file G_q keeps the hand-set sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sgr.core.logistic import asset_file
from sgr.core.mlp import MLPScorer, fit_listwise_mlp, load_mlp

ASSET = "path_ranker.json"
#: the ranker of a G_q expanded three hops deep (``deeper_at``): fitted on the same dev questions expanded three
#: deep, so a three-hop path is one it has seen; the first ranker, which never saw one, stays for two hops
DEEP_ASSET = "path_ranker_deep.json"

#: φ(P, q), in order (module docstring).
FEATURES = ("rel_mean", "rel_first", "rel_last", "rel_min", "path_sim", "order", "alignment", "named_end",
            "type_check", "hops1", "hops2", "hops3", "cvt_steps", "p_hops", "p_hops_gap", "log_answers",
            "ends_on_linked", "described_end", "described_sim", "lex_last", "walks_back", "walks_back_unasked")

#: s(P): the path ranker is an :class:`~sgr.core.mlp.MLPScorer` over :data:`FEATURES`
PathRanker = MLPScorer


def asset_path(depth: int = 2) -> Path:
    """The shipped ranker of a G_q expanded ``depth`` hops deep."""
    return asset_file(DEEP_ASSET if depth > 2 else ASSET)


def load_path_ranker(path: str | None = None, depth: int = 2) -> PathRanker | None:
    """The ranker at ``path`` (default: the shipped one for ``depth``), or None when there is none."""
    return load_mlp(str(path or asset_path(depth)), FEATURES)


def train_path_ranker(questions: Sequence[Sequence[Mapping[str, float]]], labels: Sequence[Sequence[int]], *,
                      hidden: int = 32, epochs: int = 100, seeds: Sequence[int] = (0, 1, 2),
                      provenance: dict[str, Any] | None = None) -> PathRanker:
    """Fit the ranker on each question's schema paths (their ``parts`` dicts; label 1: the path reaches a gold
    answer) so that a right path ranks first among its question's paths (:func:`sgr.core.mlp.fit_listwise_mlp`;
    the defaults are those ``bench/path_ranker.py`` chose by two-fold cross-validation on the training questions)."""
    return fit_listwise_mlp(FEATURES, questions, labels, hidden=hidden, epochs=epochs, seeds=seeds,
                            provenance=provenance)
