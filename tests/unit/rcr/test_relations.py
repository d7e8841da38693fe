"""RCR's relation retriever (sgr/retrieval/relations.py, training.py): loss, heads, RRA@k, readers, hard
negatives (no Neo4j needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sgr.core.errors import InputError
from sgr.retrieval.relations import CosineRelationRetriever, RelationRetriever, TrainedRelationRetriever
from sgr.retrieval.supervision import RelationExample, metaqa_qtype_path, metaqa_question_text, split_validation
from sgr.retrieval.training import (RelationHeads, RelationTrainConfig, gold_ranks, margin_ranking_loss, rra_at_k,
                                    train_heads)

VOCAB = [
    "location.country.languages_spoken", "language.human_language.countries_spoken_in",
    "people.person.place_of_birth", "location.location.containedby", "film.film.directed_by",
    "film.director.film", "sports.sports_team_roster.team", "people.person.spouse_s",
    "government.government_position_held.office_holder", "location.country.currency_used", "music.artist.genre",
    "people.person.nationality", "common.topic.notable_types", "book.author.works_written", "people.marriage.spouse",
]
TRAIN = [
    ("what country is the statue of liberty in", "location.location.containedby"),
    ("where is mount everest located", "location.location.containedby"),
    ("which continent is brazil in", "location.location.containedby"),
    ("what state is chicago in", "location.location.containedby"),
    ("what country is big ben in", "location.location.containedby"),
    ("what language do people in france speak", "location.country.languages_spoken"),
    ("what currency is used in germany", "location.country.currency_used"),
    ("who is tom cruise married to", "people.person.spouse_s"),
    ("what team does lebron james play for", "sports.sports_team_roster.team"),
    ("what genre of music is beyonce", "music.artist.genre"),
    ("where was barack obama born", "people.person.place_of_birth"),
]
HELD_OUT = RelationExample("eiffel", "what country is the eiffel tower in", (("location.location.containedby",),))


def test_margin_loss_matches_equation_2_by_hand() -> None:
    pos = torch.tensor([0.9, 0.2])
    neg = torch.tensor([0.5, 0.1, 0.8])
    # max(0, 0.5 - s+ + s-) for each (s+, s-) pair, averaged over the 6 triplets
    expected = sum(max(0.0, 0.5 - p + n) for p in (0.9, 0.2) for n in (0.5, 0.1, 0.8)) / 6
    assert margin_ranking_loss(pos, neg, gamma=0.5).item() == pytest.approx(expected)
    # padded positives are ignored
    pos2 = torch.tensor([[0.9, 0.2, 99.0]])
    mask = torch.tensor([[True, True, False]])
    assert margin_ranking_loss(pos2, neg.unsqueeze(0), 0.5, pos_mask=mask).item() == pytest.approx(expected)
    # a well-separated pair costs nothing
    assert margin_ranking_loss(torch.tensor([1.0]), torch.tensor([0.0]), 0.5).item() == 0.0


def test_heads_have_the_papers_shape() -> None:
    heads = RelationHeads(384)
    for head in (heads.question, heads.relation):
        kinds = [type(m).__name__ for m in head]
        assert kinds == ["Linear", "SiLU", "Dropout", "Linear"]
        assert head[0].in_features == head[0].out_features == head[3].out_features == 384
        assert head[2].p == pytest.approx(0.1)
    heads.eval()
    with torch.no_grad():
        sim = heads.similarity(torch.randn(3, 384), torch.randn(5, 384))
    assert sim.shape == (3, 5)
    assert float(sim.abs().max()) <= 1.0 + 1e-5


def test_rra_counts_a_question_only_when_all_gold_relations_are_in_the_top_k() -> None:
    rels = ["a", "b", "c", "d"]
    scores = np.array([[0.9, 0.8, 0.1, 0.0],   # gold {a, c}: worst rank 2
                       [0.1, 0.2, 0.3, 0.4],   # gold {d}: rank 0
                       [0.5, 0.5, 0.5, 0.5]])  # gold {x}: not in the vocabulary
    ranks = gold_ranks(scores, rels, [["a", "c"], ["d"], ["x"]])
    assert ranks == [2, 0, None]
    assert rra_at_k(ranks, (1, 2, 3)) == {1: pytest.approx(1 / 3), 2: pytest.approx(1 / 3), 3: pytest.approx(2 / 3)}
    # ties count against the gold relation
    assert gold_ranks(np.array([[0.5, 0.5]]), ["a", "b"], [["a"]]) == [1]


def test_a_trained_head_ranks_the_gold_relation_first_where_cosine_did_not() -> None:
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    cosine = CosineRelationRetriever(VOCAB)
    cos_rank = gold_ranks(cosine.scores([HELD_OUT.question]), VOCAB, [HELD_OUT.relations])[0]
    assert cos_rank is not None and cos_rank > 0, "precondition: plain cosine must miss the gold relation at top-1"

    cfg = RelationTrainConfig(epochs=40, lr=1e-3, negatives=10, batch_size=4, seed=0)
    result = train_heads(train, [HELD_OUT], VOCAB, VOCAB, cfg)
    trained = TrainedRelationRetriever(VOCAB, result.heads)
    assert isinstance(trained, RelationRetriever) and isinstance(cosine, RelationRetriever)
    assert trained.retrieve(HELD_OUT.question, 1)[0].name == "location.location.containedby"
    assert result.best_val[10] == 1.0
    assert result.history[-1].loss < result.history[1].loss  # training reduced eq. 2's loss


def test_metaqa_qtype_paths_and_text() -> None:
    assert metaqa_qtype_path("actor_to_movie_to_director") == ("starred_actors", "directed_by")
    assert metaqa_qtype_path("movie_to_tags") == ("has_tags",)
    assert metaqa_qtype_path("tag_to_movie") == ("has_tags",)
    assert metaqa_qtype_path("movie_to_writer_to_movie_to_year") == ("written_by", "written_by", "release_year")
    with pytest.raises(InputError):
        metaqa_qtype_path("actor_to_director")
    assert metaqa_question_text("which movies did [Tom Hanks] star in") == "which movies did Tom Hanks star in"


def test_validation_split_is_fixed_by_the_seed() -> None:
    ex = [RelationExample(str(i), f"q{i}", (("r",),)) for i in range(50)]
    a = split_validation(ex, 0.2, seed=1)
    b = split_validation(ex, 0.2, seed=1)
    assert [e.id for e in a[1]] == [e.id for e in b[1]] and len(a[1]) == 10 and len(a[0]) == 40
    assert not {e.id for e in a[0]} & {e.id for e in a[1]}
    assert not math.isclose(len(split_validation(ex, 0.5, seed=2)[1]), 10)


def test_retrieve_ranks_among_the_given_names_only() -> None:
    cosine = CosineRelationRetriever(VOCAB)
    full = cosine.retrieve("what language do people in france speak", 3)
    assert len(full) == 3 and full[0].score >= full[1].score >= full[2].score
    among = ["music.artist.genre", "film.film.directed_by", "not.in.the.vocabulary"]
    some = cosine.retrieve("what language do people in france speak", 5, among=among)
    assert {r.name for r in some} == {"music.artist.genre", "film.film.directed_by"}
    assert cosine.score_of("x", ["not.in.the.vocabulary"]) == {"not.in.the.vocabulary": 0.0}


def test_hard_negatives_are_the_heads_top_ranked_non_gold_relations() -> None:
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    seen: list[float] = []
    cfg = RelationTrainConfig(epochs=3, lr=1e-3, negatives=6, hard_negatives=6, batch_size=4, seed=0)
    result = train_heads(train, [HELD_OUT], VOCAB, VOCAB, cfg, progress=lambda log: seen.append(log.loss))
    # with every negative a hard one, the first epoch's loss is higher than with uniform negatives
    uniform = train_heads(train, [HELD_OUT], VOCAB, VOCAB,
                          RelationTrainConfig(epochs=3, lr=1e-3, negatives=6, batch_size=4, seed=0))
    assert len(seen) == 3 and result.history[1].loss > uniform.history[1].loss


def test_fusion_weight_is_chosen_on_validation_and_w1_is_plain_cosine() -> None:
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    cfg = RelationTrainConfig(epochs=5, lr=1e-3, negatives=10, batch_size=4, seed=0, cosine_weights=(0.0, 0.5, 1.0))
    result = train_heads(train, [HELD_OUT], VOCAB, VOCAB, cfg)
    assert result.cosine_weight in (0.0, 0.5, 1.0)


def test_model_selection_measures_the_k_it_selects_on() -> None:
    """A vocabulary smaller than every k of the table (MetaQA has 9 relations) selects on a smaller k."""
    train = [RelationExample(str(i), q, ((r,),)) for i, (q, r) in enumerate(TRAIN)]
    cfg = RelationTrainConfig(epochs=2, lr=1e-3, negatives=6, batch_size=4, seed=0, select_k=1)
    result = train_heads(train, [HELD_OUT], VOCAB, VOCAB, cfg)
    assert set(result.best_val) == {1, 10, 50, 100, 200} and all(log.val_rra.keys() == result.best_val.keys()
                                                                  for log in result.history[1:])
    cosine = CosineRelationRetriever(VOCAB)
    only_cosine = TrainedRelationRetriever(VOCAB, result.heads, cosine_weight=1.0)
    question = "what language do people in france speak"
    assert np.allclose(only_cosine.scores([question]), cosine.scores([question]), atol=1e-5)
    assert [r.name for r in only_cosine.retrieve(question, 5)] == [r.name for r in cosine.retrieve(question, 5)]
    assert not np.allclose(TrainedRelationRetriever(VOCAB, result.heads).scores([question]),
                           cosine.scores([question]), atol=1e-3)
