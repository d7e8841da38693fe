"""decide(): A_v, the vote and how they combine (sgr/methods/sgr/decision.py, SGR eqs. 12–13 and 17–18)."""

import dataclasses
import json

import pytest

from sgr.methods.sgr.decision import (CandidateIn, DecisionInputs, DecisionParams, VoteIn, continuing_sources, decide,
                                     rho_can_change, trust_order)

R, Q = ("r",), ("q",)


def cand(key, source, gamma, delta, rels=R):
    return CandidateIn(key, key.upper(), source, rels, gamma, delta)


def vote(answer, rho, eta, rels=R, origin="graph"):
    return VoteIn(answer, answer.upper(), rels, rho, eta, origin)


def test_threshold_keeps_only_answers_with_v_at_least_epsilon():
    inputs = DecisionInputs(["compiled"], [cand("a", "compiled", 1.0, 0.0), cand("b", "compiled", 0.5, 1.0),
                                           cand("c", "compiled", 0.0, 1.0)])
    d = decide(inputs, DecisionParams(mu=0.3, epsilon=0.65))
    # v: a = 0.7, b = 0.3 + 0.35 = 0.65, c = 0.3
    assert [a.key for a in d.answers] == ["a", "b"] and d.valid == [True, True, False]
    assert d.v[2] == pytest.approx(0.3) and d.route == "direct" and d.stage == "compiled"
    assert d.route_source == "compiled"


def test_the_first_source_with_a_valid_candidate_answers_unless_av_votes():
    inputs = DecisionInputs(["llm", "compiled"], [cand("x", "llm", 0.9, 0.9), cand("y", "compiled", 1.0, 1.0, Q)],
                            votes=[vote("y", 0.5, 1.0, Q), vote("y", 0.5, 1.0, Q)])
    seq = decide(inputs, DecisionParams(mu=0.3, epsilon=0.7, graph_first=False))  # sources in the given order
    assert [a.key for a in seq.answers] == ["x"] and seq.stage == "llm" and seq.route_source == "model"
    both = decide(inputs, DecisionParams(mu=0.3, epsilon=0.7, lam=0.3, integrate=True, answer_ratio=0.9))
    # support: x = v 0.9; y = v 1.0 + ω 0.65 + 0.65
    assert [a.key for a in both.answers] == ["y"] and both.stage == "integrated"
    assert both.answers[0].score == pytest.approx(1.0 + 2 * (0.3 * 0.5 + 0.7 * 1.0))
    assert both.route == "collaborative" and both.route_source == "graph"  # the paths carried more than A_v


def test_answers_of_equal_v_are_ranked_by_the_paths_support_not_by_name():
    # "asia" and "europe" end one path (equal v); the voting paths reach "europe" twice, "asia" once
    inputs = DecisionInputs(["compiled"], [cand("asia", "compiled", 1.0, 0.9), cand("europe", "compiled", 1.0, 0.9),
                                           cand("zz", "compiled", 1.0, 0.95)],
                            votes=[vote("europe", 0.5, 1.0), vote("europe", 0.5, 1.0), vote("asia", 0.5, 1.0),
                                   vote("zz", 0.1, 0.1)])
    d = decide(inputs, DecisionParams(mu=0.5, epsilon=0.5))
    assert [a.key for a in d.answers] == ["zz", "europe", "asia"]  # v first (zz: 0.975), then support
    alone = decide(inputs, DecisionParams(mu=0.5, epsilon=0.5, collaborative=False))
    assert [a.key for a in alone.answers] == ["zz", "asia", "europe"]  # no paths vote: by name


def test_answers_of_equal_v_go_first_to_the_one_more_relations_link_to_the_entities():
    # one path's ends, equal v: "turkish" is linked to the question's entity by two relations (official_language,
    # languages_spoken), "arabic" by one; the vote reaches "arabic" twice
    inputs = DecisionInputs(["compiled"], [cand("arabic", "compiled", 1.0, 0.9), cand("turkish", "compiled", 1.0, 0.9),
                                           cand("zz", "compiled", 1.0, 0.95)],
                            votes=[vote("arabic", 0.5, 1.0), vote("arabic", 0.5, 1.0), vote("turkish", 0.5, 1.0)],
                            links={"turkish": 2, "arabic": 1, "zz": 0})
    d = decide(inputs, DecisionParams(mu=0.5, epsilon=0.5))
    assert [a.key for a in d.answers] == ["zz", "turkish", "arabic"]  # v first (zz: 0.975), then the links
    unlinked = decide(dataclasses.replace(inputs, links={}), DecisionParams(mu=0.5, epsilon=0.5))
    assert [a.key for a in unlinked.answers] == ["zz", "arabic", "turkish"]  # then the paths' support
    # the vote: equal support, the linked answer first
    tied = DecisionInputs(["compiled"], [], votes=[vote("arabic", 0.5, 1.0), vote("turkish", 0.5, 1.0)],
                          links={"turkish": 1})
    assert [a.key for a in decide(tied, DecisionParams()).answers] == ["turkish", "arabic"]
    again = DecisionInputs.from_dict(json.loads(json.dumps(inputs.to_dict())))
    assert again.links == {"turkish": 2, "arabic": 1}  # replays with them; an answer linked by none is left out


def test_the_answer_is_the_whole_answer_set_of_the_winning_relation_path():
    # "who founded the kkk": the model's path reaches 2 founders under one name, G_q's compiled path all of them
    # under its inverse; the compiled ends of that path join the answer with the model's δ, if γ lets them
    FOUNDED, FOUNDERS = ("organizations_founded",), ("founders",)
    inputs = DecisionInputs(["model1", "compiled"],
                            [cand("a", "model1", 1.0, 0.98, FOUNDED), cand("b", "model1", 1.0, 0.98, FOUNDED),
                             cand("z", "model1", 0.0, 0.98, FOUNDED),  # not consistent with G_q: stays out
                             cand("b", "compiled", 1.0, 0.5, FOUNDERS), cand("c", "compiled", 1.0, 0.5, FOUNDERS),
                             cand("d", "compiled", 0.1, 0.5, FOUNDERS),  # γ too low even with the model's δ
                             cand("e", "compiled", 1.0, 0.5, Q)],  # another relation path: not this answer set
                            same_relation={"organizations_founded": "founders"})
    params = DecisionParams(mu=0.5, epsilon=0.8)
    d = decide(inputs, params)
    assert [a.key for a in d.answers] == ["a", "b", "c"] and d.stage == "model1" and d.route_source == "model"
    assert d.answers[2].score == pytest.approx(0.5 * 0.98 + 0.5 * 1.0) and d.answers[2].candidates == [4]
    assert d.valid[4] is False  # on its own (δ = the prior) c is not valid
    alone = decide(dataclasses.replace(inputs, same_relation={}), params)  # two names, two relation paths
    assert [a.key for a in alone.answers] == ["a", "b"]
    again = DecisionInputs.from_dict(json.loads(json.dumps(inputs.to_dict(mu=0.5))))
    assert [a.key for a in decide(again, params).answers] == ["a", "b", "c"]


def test_a_plan_answers_first_only_when_its_question_is_alike_enough():
    P = ("p1", "p2")
    inputs = DecisionInputs(["model1", "plan1", "compiled"],
                            [cand("m", "model1", 0.1, 0.9), cand("p", "plan1", 0.0, 0.95, P),
                             cand("c", "compiled", 1.0, 0.5, Q)],
                            model_patterns=[R])
    params = DecisionParams(mu=0.5, epsilon=0.4, gamma_min=0.0, graph_first=False)
    trusted = decide(inputs, dataclasses.replace(params, plan_trust=0.9))
    assert [a.key for a in trusted.answers] == ["p"] and trusted.stage == "plan1" and trusted.route_source == "plan"
    after = decide(inputs, dataclasses.replace(params, plan_trust=0.96))  # below plan_trust a plan takes no part
    assert [a.key for a in after.answers] == ["m"] and after.stage == "model1" and after.route_source == "model"
    assert after.valid == [True, False, True]
    inputs.candidates[0].delta = 0.1  # the model's path is not valid either: G_q's best path answers, not the plan
    assert decide(inputs, dataclasses.replace(params, plan_trust=0.96)).stage == "compiled"
    inputs.candidates[1].relations = R  # a plan on the model's own path is the model's route
    assert decide(inputs, dataclasses.replace(params, plan_trust=0.9)).route_source == "model"


def test_av_votes_with_weight_v():
    inputs = DecisionInputs(["llm"], [cand("a", "llm", 1.0, 1.0)], votes=[vote("b", 0.5, 1.0), vote("a", 0.5, 0.1)])
    d = decide(inputs, DecisionParams(lam=0.0, epsilon=0.7, integrate=True, answer_ratio=1.0))
    # a: v 1.0 + ω 0.1 beats b: ω 1.0 only because A_v votes
    assert [a.key for a in d.answers] == ["a"] and d.route == "direct" and d.route_source == "model"
    assert d.answers[0].candidates == [0] and d.answers[0].votes == [1]
    without = decide(DecisionInputs(["llm"], [cand("a", "llm", 1.0, 1.0)], votes=inputs.votes, validated=True),
                     DecisionParams(lam=0.0, epsilon=1.1, integrate=True, answer_ratio=1.0))
    assert [a.key for a in without.answers] == ["b"]  # not valid: no vote of its own


def test_a_model_path_with_high_rho_beats_a_better_gamma_graph_path_only_when_lambda_says_so():
    votes = [vote("m", 0.9, 0.8, Q, origin="model"), vote("g", 0.5, 1.0)]
    inputs = DecisionInputs([], [], votes, model_patterns=[Q])
    # ω_m = 0.8 + 0.1 λ, ω_g = 1.0 − 0.5 λ: the model's path wins iff λ > 1/3
    low = decide(inputs, DecisionParams(lam=0.3, answer_ratio=1.0))
    high = decide(inputs, DecisionParams(lam=0.5, answer_ratio=1.0))
    assert [a.key for a in low.answers] == ["g"] and low.route_source == "graph"
    assert [a.key for a in high.answers] == ["m"] and high.route_source == "model"
    # the same trade-off for candidates through μ: δ = ρ 0.9 on γ 0.8 against the prior 0.5 on γ 1.0
    cands = DecisionInputs(["model1", "compiled"], [cand("m", "model1", 0.8, 0.9, Q), cand("g", "compiled", 1.0, 0.5)],
                           model_patterns=[Q])
    # v_m = 0.8 + 0.1 μ, v_g = 1.0 − 0.5 μ against ε = 0.84: μ 0.3 → (0.83, 0.85), μ 0.5 → (0.85, 0.75)
    assert decide(cands, DecisionParams(mu=0.3, epsilon=0.84)).stage == "compiled"
    assert decide(cands, DecisionParams(mu=0.5, epsilon=0.84)).stage == "model1"


def test_nothing_valid_means_the_paths_vote():
    inputs = DecisionInputs(["llm"], [cand("a", "llm", 0.0, 0.5)],
                            votes=[vote("x", 0.5, 1.0), vote("y", 0.9, 1.0, Q), vote("x", 0.1, 0.2, Q)])
    d = decide(inputs, DecisionParams(lam=0.5, epsilon=0.7, answer_ratio=0.9))
    # ω = [0.75, 0.95, 0.15] → x: 0.9, y: 0.95
    assert d.route == "collaborative" and d.stage == "vote" and not any(d.valid)
    assert [(a.key, round(a.score, 6)) for a in d.tally] == [("y", 0.95), ("x", 0.9)]
    assert [a.key for a in d.answers] == ["y", "x"]
    assert [a.key for a in decide(inputs, DecisionParams(lam=0.5, answer_ratio=0.96)).answers] == ["y"]
    off = decide(inputs, DecisionParams(lam=0.5, collaborative=False))
    assert off.answers == [] and off.route is None and off.route_source is None


def test_unvalidated_candidates_are_all_valid():
    d = decide(DecisionInputs(["llm"], [cand("a", "llm", 0.0, 0.0)], validated=False), DecisionParams())
    assert d.valid == [True] and d.answers[0].score == 1.0


def test_decide_is_deterministic_and_replays_from_its_json():
    inputs = DecisionInputs(["llm", "model1", "compiled"],
                            [cand("a", "llm", 0.6, 0.7), cand("b", "model1", 0.9, 0.4, Q), cand("c", "compiled", 1, 0.5)],
                            votes=[vote(k, r, e, rels) for k, r, e, rels in
                                   [("a", 0.3, 0.9, R), ("b", 0.8, 0.5, Q), ("c", 0.5, 1.0, R), ("a", 0.2, 0.4, Q)]],
                            model_patterns=[Q])
    again = DecisionInputs.from_dict(json.loads(json.dumps(inputs.to_dict())))
    for params in [DecisionParams(), DecisionParams(mu=0.6, epsilon=0.5, lam=0.7, integrate=True)]:
        first = decide(inputs, params)
        assert decide(inputs, params) == first == decide(again, params)
    capped = inputs.to_dict(max_votes=2, lam=0.0)
    assert capped["votes_total"] == 4 and sorted(v[0] for v in capped["votes"]) == ["a", "c"]
    few = inputs.to_dict(max_candidates=1, mu=0.0)  # v = γ: c (1.0) kept
    assert few["candidates_total"] == 3 and [c[0] for c in few["candidates"]] == ["c"]


def test_rho_is_worth_measuring_only_when_it_can_change_the_top_answer():
    votes = [vote("x", 0.5, 1.0), vote("x", 0.5, 1.0, Q), vote("y", 0.5, 0.8, ("s",))]
    inputs = DecisionInputs([], [], votes)
    # λ 0.1: x = 1.9, y = 0.77; at worst x loses 2·0.1·0.5 and y gains 0.1·0.5 → x stays first
    low = DecisionParams(lam=0.1)
    assert not rho_can_change(inputs, low, decide(inputs, low))
    # λ 0.9: x = 1.1, y = 0.53; x may lose 0.9 and y gain 0.45 → worth measuring
    high = DecisionParams(lam=0.9)
    assert rho_can_change(inputs, high, decide(inputs, high))
    # a tie between answers reached by the same pattern: one shared ρ cannot break it
    tie = DecisionInputs([], [], [vote("x", 0.5, 1.0), vote("y", 0.5, 1.0), vote("z", 0.5, 0.0, Q)])
    assert not rho_can_change(tie, low, decide(tie, low))
    measured = DecisionInputs([], [], [vote("x", 0.5, 1.0), vote("y", 0.5, 0.8)])
    for v in measured.votes:
        v.rho_source = "prp-rm"  # nothing left at the prior: nothing to measure
    assert not rho_can_change(measured, high, decide(measured, high))


def test_gamma_min_lets_the_graph_veto_a_confident_model_path():
    # "who was president after franklin d. roosevelt?": the model's nationality path (ρ 0.93) reaches a node by a walk
    # G_q does not hold (γ 0); G_q's compiled path and its votes say Truman
    NAT, VP = ("people.person.nationality",), ("government.us_president.vice_president",)
    model = CandidateIn("usa", "USA", "model1", NAT, 0.0, 0.93, "model-path")
    inputs = DecisionInputs(["model1", "compiled"], [model, cand("truman", "compiled", 1.0, 0.5, VP),
                                                     cand("garner", "compiled", 0.47, 0.5, VP)],
                            votes=[vote("truman", 0.5, 1.0, VP), vote("truman", 0.5, 1.0, VP)], model_patterns=[NAT])
    trusting = decide(inputs, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.0, graph_first=False))  # v = 0.837: valid on the model's word alone
    assert [a.key for a in trusting.answers] == ["usa"] and trusting.stage == "model1"
    vetoed = decide(inputs, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.3))
    assert vetoed.valid == [False, False, False] and vetoed.stage == "vote"  # compiled: v = 0.55 < ε
    assert [a.key for a in vetoed.answers] == ["truman"]
    # the floor bounds the model's δ only: a plan or G_q's own candidate of low γ keeps its v ≥ ε test
    low = DecisionInputs(["compiled"], [CandidateIn("x", "X", "compiled", VP, 0.1, 1.0, "prp-rm")])
    assert decide(low, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.3)).valid == [True]
    # without G_q nothing is validated, so nothing is vetoed
    free = dataclasses.replace(inputs, validated=False)
    assert decide(free, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.3, graph_first=False)).stage == "model1"


def test_gamma_min_also_bounds_the_rest_of_a_model_paths_answer_set():
    # the model's path wins with "a" (γ 1.0); the compiled ends of the same path join with the model's δ only if
    # their own γ reaches the floor
    P = ("p",)
    inputs = DecisionInputs(["model1", "compiled"],
                            [CandidateIn("a", "A", "model1", P, 1.0, 0.95, "model-path"),
                             cand("b", "compiled", 0.9, 0.5, P), cand("c", "compiled", 0.2, 0.5, P)])
    open_set = decide(inputs, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.0))
    assert [a.key for a in open_set.answers] == ["a", "b", "c"]  # c: v = 0.855 + 0.02 ≥ 0.8
    floored = decide(inputs, DecisionParams(mu=0.9, epsilon=0.8, gamma_min=0.3))
    assert [a.key for a in floored.answers] == ["a", "b"]


def test_gs_best_path_answers_before_the_models_own_paths_and_after_a_trusted_plan():
    country, continent = ("held", "jurisdiction"), ("held", "jurisdiction", "continent")
    inputs = DecisionInputs(["llm", "model1", "plan1", "compiled"],
                            [cand("bahamas", "llm", 1.0, 0.9, country), cand("bahamas", "model1", 1.0, 0.9, country),
                             cand("americas", "plan1", 1.0, 0.96, Q),
                             cand("north_america", "compiled", 1.0, 0.9, continent)], model_patterns=[country])
    params = DecisionParams(mu=0.5, epsilon=0.5, plan_trust=0.95)
    assert decide(inputs, params).stage == "plan1"  # a plan of a question alike enough comes first
    below = dataclasses.replace(params, plan_trust=0.97)
    first = decide(inputs, below)
    assert [a.key for a in first.answers] == ["north_america"] and first.stage == "compiled"
    off = decide(inputs, dataclasses.replace(below, graph_first=False))
    assert [a.key for a in off.answers] == ["bahamas"] and off.stage == "llm" and off.route_source == "model"


def test_a_model_path_that_continues_gs_best_path_answers_before_it():
    # G_q's best path stops at the bridge (the team that won the 1970 finals); the model's path goes on from it
    # (its championships), written under the inverse name of G_q's first step
    won, team = ("event.champion",), ("team.championships",)
    inputs = DecisionInputs(["model1", "model2", "compiled"],
                            [cand("finals_1973", "model1", 1.0, 0.6, team + ("event.champion",)),
                             cand("madison", "model2", 1.0, 0.9, ("team.arena",)),
                             cand("knicks", "compiled", 1.0, 0.5, won)],
                            model_patterns=[team + ("event.champion",), ("team.arena",)],
                            same_relation={"team.championships": "event.champion", "event.champion": "event.champion"})
    params = DecisionParams(mu=0.5, epsilon=0.5, gamma_min=0.3)
    assert trust_order(inputs, params.plan_trust, graph_first=True) == ["model1", "compiled", "model2"]
    d = decide(inputs, params)
    assert [a.key for a in d.answers] == ["finals_1973"] and d.stage == "model1"
    # a model path that only shares a relation elsewhere, or ends where G_q's does, does not continue it
    assert continuing_sources(inputs, "model2") == []
    same = dataclasses.replace(inputs, candidates=[cand("knicks", "model1", 1.0, 0.6, team),
                                                   cand("knicks", "compiled", 1.0, 0.5, won)])
    assert continuing_sources(same, "compiled") == []
    # the continuing path must still be valid on its own (here v < ε): then G_q's path answers
    vetoed = dataclasses.replace(inputs, candidates=[dataclasses.replace(inputs.candidates[0], gamma=0.1,
                                                                         delta_source="model-path"),
                                                     *inputs.candidates[1:]])
    assert decide(vetoed, params).stage == "compiled"
    # without graph_first the model's paths come first as given
    assert trust_order(inputs, params.plan_trust, graph_first=False) == ["model1", "model2", "compiled"]


def test_when_the_join_held_on_the_paths_they_outvote_a_source_whose_answer_meets_no_second_entity():
    # "what group fought at Vicksburg that was based in Montgomery?": G_q's compiled path reaches people, none of
    # whom meets Montgomery; the only walks that do (and so vote alone: joined) reach the Confederacy
    inputs = DecisionInputs(["compiled"], [cand("carter", "compiled", 1.0, 0.5), cand("grant", "compiled", 1.0, 0.5)],
                            votes=[vote("csa", 0.5, 0.6, Q), vote("csa", 0.5, 0.4, Q)], joined=True)
    d = decide(inputs, DecisionParams())
    assert [a.key for a in d.answers] == ["csa"] and d.route == "collaborative" and d.stage == "vote"
    # without the join holding (every walk votes), or with join_first off, the compiled path answers as before
    for params, joined in ((DecisionParams(), False), (DecisionParams(join_first=False), True)):
        d = decide(dataclasses.replace(inputs, joined=joined), params)
        assert [a.key for a in d.answers] == ["carter", "grant"] and d.stage == "compiled"
    # a source whose top answer is one the joined walks reach answers directly
    met = dataclasses.replace(inputs, candidates=inputs.candidates + [cand("csa", "compiled", 1.0, 0.9)])
    d = decide(met, DecisionParams())
    assert d.answers[0].key == "csa" and d.stage == "compiled"
    again = DecisionInputs.from_dict(json.loads(json.dumps(inputs.to_dict())))
    assert again.joined and not DecisionInputs.from_dict({**inputs.to_dict(), "joined": False}).joined
