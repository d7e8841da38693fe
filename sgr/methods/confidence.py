"""How likely the top answer is right, from the pipeline's own signals, and when to say "not found in the graph".

A method's score beside an answer (a vote support of 2.19, a v of 0.707) is not a probability. Each prediction
carries *signals* — numbers the method already computed: for SGR the top candidate's v, δ and γ, the route and who
carried it, the vote's margin, G_q's best path score and its lead over the next one, how well that path matches the
question (the cosine of its relation text with the question, its relations' mean and last scores, the type check:
where the graph lacks the answer, the best path left is a poorer match), the path's length, how the topic
was linked, whether a constraint could not be checked, whether a second round relaxed the question
(:meth:`sgr.methods.sgr.trace.SGRResult.signals`), and how the top answer is supported among the strongest
voting walks (how many reach it and their share of the walks, the best one's ω and its lead over a walk to another
answer by another relation path), how many kinds of candidate source (the model's paths, a plan, G_q's compiled path)
reach it, how well the relation that gives it fits the word that asks for the answer (the word–relation lexicon's
score of its paths' last relation), and whether the graph names relations Freebase-style
(:func:`sgr.methods.sgr.trace.evidence_signals`); for other methods the answer scores' margin and the path length
(:func:`generic_signals`). A :class:`Calibrator` maps them to P(top answer correct):

    p = iso(σ(b + Σ_t f_t(signals)))      or      p = iso(σ(w · z(signals) + b))

gradient-boosted trees over the signals (:class:`sgr.core.trees.BoostedTrees`, :data:`TREE_PARAMS`; what the shipped
calibrator reads) or logistic regression over the standardised signals (:class:`sgr.core.logistic.LogisticScorer`),
then isotonic regression of its cross-fitted output on the dev predictions (:func:`fit_calibrator`), so p is
calibrated (reliability diagram on the diagonal), not only ranked. The trees were chosen on dev runs: cross-fitted,
they ranked right answers above wrong ones better than the logistic part on CWQ dev, WebQSP train and MetaQA dev
alike, and abstained on more unanswerable questions at the same share of correct answers kept
(bench/experiments/confidence.md).
Calibrators are fitted per method and model on dev runs (``bench/confidence.py``: CWQ dev, MetaQA dev) and shipped
in ``sgr/assets/calibration.json`` with their provenance and abstention threshold; a method or model without one gets
no confidence (``None``), and nothing abstains on an uncalibrated number.

Abstention (:func:`abstention`): below the threshold (the calibrator's default, chosen on dev to keep a stated share
of the correct answers, or the caller's ``min_confidence``) the answer is "not found in the graph", with the reasons
the signals give (no entity linked; no path from the entity matches the question; candidates failed validation; a
constraint could not be checked). Two reasons are also named as facts whenever they hold: a constraint the trace
could not check, and an answer that meets only one of the entities the question names (``ev_unjoined``: recorded with
the signals, read by no shipped calibrator; on the dev runs it moved the ranking and the abstention both ways,
bench/experiments/confidence.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from sgr.core.logistic import LogisticScorer, asset_file, json_text
from sgr.core.trees import BoostedTrees
from sgr.core.types import Prediction

ASSET = "calibration.json"
#: the signals a calibrator reads unless its method has its own (:data:`METHOD_SIGNALS`; a method gives those it has,
#: a missing one is 0)
SIGNALS = ("answered", "top_score", "score_margin", "log_answers", "path_length", "v_top", "delta_top",
           "gamma_top", "valid_any", "route_direct", "route_collaborative", "source_model", "source_plan",
           "source_compiled", "source_graph", "vote_share", "vote_margin", "gq_top", "gq_margin", "rho_top",
           "link_given", "link_score", "unchecked", "relaxed", "gq_path_sim", "gq_rel_mean", "gq_rel_last",
           "gq_type_check", "ev_votes_top", "ev_vote_share", "ev_omega_top", "ev_rival_gap", "dotted_names",
           "ev_sources", "ev_lex_last")
#: what RCR's calibrator reads besides :data:`SIGNALS`, chosen on its dev runs: whether two or more entities were
#: linked and the answer meets fewer than two of them, and the question's length (bench/experiments/confidence.md)
RCR_SIGNALS = SIGNALS + ("ev_unjoined", "q_words")
#: the signals a method's calibrator is fitted on, where they are not :data:`SIGNALS`
METHOD_SIGNALS = {"rcr": RCR_SIGNALS, "rcr-ks0": RCR_SIGNALS, "rcr-ks2": RCR_SIGNALS}
#: every signal some method's calibrator may read (a saved calibrator that reads another is refused)
KNOWN_SIGNALS = frozenset(SIGNALS).union(*METHOD_SIGNALS.values())
#: the few signals a calibrator fitted on a small dev set reads (``bench/confidence.py --signals compact``): with a
#: few hundred dev answers, all of :data:`SIGNALS` overfit (the shipped path generator's first fit, CWQ dev
#: cross-fitted AUROC 0.49); these are the ones that separate right from wrong answers on CWQ dev and MetaQA dev
#: alike — the answer's validation δ and score, the path's length and G_q's score of it and its match with the
#: question, the answer count, the voting walks' share and lead, and the graph's naming (bench/experiments/confidence.md)
COMPACT_SIGNALS = ("answered", "top_score", "delta_top", "path_length", "log_answers", "gq_top", "gq_path_sim",
                   "ev_vote_share", "ev_rival_gap", "dotted_names")
#: the reasons an abstention names
REASONS = {
    "no_entity": "no entity of the question was found in the graph",
    "no_path": "no path from the entity matches the question",
    "not_valid": "no candidate passed validation (the paths' vote answered)",
    "unchecked": "a constraint of the question could not be checked",
    "linking": "the entity linked may not be the one the question is about",
    "unjoined": "the answer does not meet every entity the question names",
}
#: the signals behind each reason: a reason is named when its signals pulled the confidence down
REASON_SIGNALS = {
    "no_path": ("gq_top", "gq_margin", "path_length", "rho_top", "top_score", "score_margin", "gq_path_sim",
                "gq_rel_mean", "gq_rel_last", "gq_type_check", "ev_votes_top", "ev_vote_share", "ev_omega_top",
                "ev_rival_gap", "ev_sources", "ev_lex_last"),
    "not_valid": ("valid_any", "v_top", "delta_top", "gamma_top", "route_direct", "route_collaborative"),
    "unchecked": ("unchecked", "relaxed"),
    "linking": ("link_given", "link_score"),
}
#: the boosted trees' parameters (scikit-learn's ``HistGradientBoostingClassifier``), chosen on the dev runs by the
#: mean of the cross-fitted AUROCs of CWQ dev, WebQSP train and MetaQA dev among depth 2–4, 100–400 trees, learning
#: rate 0.025–0.1, 20 or 50 rows a leaf (bench/experiments/confidence.md)
TREE_PARAMS = {"max_depth": 3, "max_iter": 400, "learning_rate": 0.025, "min_samples_leaf": 20,
               "l2_regularization": 1.0}
#: what a calibrator's first part can be
Scorer = LogisticScorer | BoostedTrees


def generic_signals(pred: Prediction) -> dict[str, float]:
    """The signals every prediction has: whether it answered, the top score and its margin over the next, the
    number of answers, the top answer's path length."""
    scores = [a.score for a in pred.answers]
    top = scores[0] if scores else 0.0
    second = scores[1] if len(scores) > 1 else 0.0
    paths = pred.answers[0].paths if pred.answers else []
    return {"answered": float(bool(pred.answers)), "top_score": float(top),
            "score_margin": float((top - second) / top) if top > 0 else 0.0,
            "log_answers": math.log1p(len(pred.answers)),
            "path_length": float(len(paths[0].relations)) if paths else 0.0}


def prediction_signals(pred: Prediction) -> dict[str, float]:
    """The method's own signals (``extra["signals"]``) over the generic ones."""
    return {**generic_signals(pred), **(pred.extra.get("signals") or {})}


@dataclass
class Calibrator:
    """P(top answer correct | signals) (module docstring) and the default abstention threshold: boosted trees or a
    logistic scorer over :data:`SIGNALS`, its output mapped by isotonic regression (``iso_x`` increasing raw
    probabilities, ``iso_y`` the calibrated ones, interpolated between)."""

    scorer: Scorer
    iso_x: np.ndarray
    iso_y: np.ndarray
    threshold: float = 0.0

    @property
    def provenance(self) -> dict[str, Any]:
        return self.scorer.provenance

    def contributions(self, signals: Mapping[str, float]) -> dict[str, float]:
        """Each signal's part of the logit: which signals pulled the confidence down."""
        return self.scorer.contributions(signals)

    def raw(self, signals: Mapping[str, float]) -> float:
        return self.scorer.score(signals)

    def probability(self, signals: Mapping[str, float]) -> float:
        r = self.raw(signals)
        return float(np.interp(r, self.iso_x, self.iso_y)) if len(self.iso_x) else r

    def to_dict(self) -> dict[str, Any]:
        return {**self.scorer.to_dict(), "iso_x": self.iso_x.round(6).tolist(), "iso_y": self.iso_y.round(6).tolist(),
                "threshold": round(self.threshold, 4)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Calibrator":
        unknown = [s for s in d["features"] if s not in KNOWN_SIGNALS]
        if unknown:
            raise ValueError(f"calibrator reads unknown signals {unknown}")
        scorer = BoostedTrees.from_dict(d) if d.get("kind") == "boosted_trees" else LogisticScorer.from_dict(d)
        return cls(scorer, np.asarray(d["iso_x"], dtype=np.float64),
                   np.asarray(d["iso_y"], dtype=np.float64), float(d.get("threshold", 0.0)))


def fit_calibrator(rows: Sequence[Mapping[str, float]], labels: Sequence[int], folds: Sequence[int], *,
                   iso: Sequence[bool] | None = None, c: float = 1.0, trees: Mapping[str, Any] | None = None,
                   signals: Sequence[str] = SIGNALS, keep_correct: float = 0.95,
                   provenance: dict[str, Any] | None = None) -> Calibrator:
    """The scorer fitted on all ``rows`` (boosted trees with the parameters ``trees``, :data:`TREE_PARAMS`; without
    them logistic weights of L2 strength ``c``); the isotonic map on their *out-of-fold* scores, each row scored by
    the scorer fitted without its fold (``folds``: one fold index per row), over the rows ``iso`` marks (default:
    all); and the threshold that keeps ``keep_correct`` of those rows' correct answers. Cross-fitting lets both parts
    see every row (scikit-learn's ``CalibratedClassifierCV(ensemble=False)`` does the same); fitting them on two
    halves left the map a quarter of the data in each cross-fitted half, and calibrated worse
    (bench/experiments/confidence.md)."""
    from sklearn.isotonic import IsotonicRegression

    def scorer(part: Sequence[Mapping[str, float]], ys: Sequence[int], prov: dict[str, Any] | None = None) -> Scorer:
        if trees is not None:
            return BoostedTrees.fit(signals, part, ys, params=trees, provenance=prov)
        return LogisticScorer.fit(signals, part, ys, c=c, provenance=prov)

    n = len(rows)
    oof = np.zeros(n)
    for k in sorted(set(folds)):
        train = [i for i in range(n) if folds[i] != k]
        part = scorer([rows[i] for i in train], [labels[i] for i in train])
        for i in range(n):
            if folds[i] == k:
                oof[i] = part.score(rows[i])
    keep = np.ones(n, dtype=bool) if iso is None else np.asarray(iso, dtype=bool)
    raw, y = oof[keep], np.asarray(labels, dtype=np.float64)[keep]
    ir = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(raw, y)
    cal = Calibrator(scorer(rows, labels, provenance),
                     np.asarray(ir.X_thresholds_, dtype=np.float64), np.asarray(ir.y_thresholds_, dtype=np.float64))
    correct = np.sort(np.interp(raw, cal.iso_x, cal.iso_y)[y == 1])
    if len(correct):
        cal.threshold = float(correct[int(math.floor((1.0 - keep_correct) * len(correct)))])
    return cal


def asset_path() -> Path:
    return asset_file(ASSET)


@lru_cache(maxsize=8)
def _calibrators(path: str) -> dict[str, Calibrator]:
    p = Path(path)
    if not p.is_file():
        return {}
    data = json.loads(p.read_text(encoding="utf-8"))
    return {k: Calibrator.from_dict(v) for k, v in (data.get("calibrators") or {}).items()}


def method_signals(method: str) -> tuple[str, ...]:
    """The signals ``method``'s calibrator is fitted on (:data:`METHOD_SIGNALS`, else :data:`SIGNALS`)."""
    return METHOD_SIGNALS.get(method, SIGNALS)


def calibration_key(method: str, model: str | None) -> str:
    """The key a calibrator is stored under: the method, and the model it calibrates when the method has one."""
    return f"{method}@{model}" if model else method


def load_calibrator(method: str, model: str | None = None, path: Path | str | None = None
                    ) -> tuple[str, Calibrator] | None:
    """The calibrator for ``method`` with ``model`` (exactly that pair; a model without its own is uncalibrated)."""
    found = _calibrators(str(path or asset_path()))
    key = calibration_key(method, model)
    return (key, found[key]) if key in found else None


def save_calibrators(calibrators: Mapping[str, Calibrator], path: Path | str | None = None) -> Path:
    """Write (merge into) the calibration file."""
    p = Path(path or asset_path())
    data = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {"calibrators": {}}
    data.setdefault("calibrators", {}).update({k: c.to_dict() for k, c in calibrators.items()})
    p.write_text(json_text(data), encoding="utf-8")
    _calibrators.cache_clear()
    return p


def attach_confidence(pred: Prediction, method: str, model: str | None = None) -> None:
    """Set ``pred.confidence`` (and ``extra["confidence"]``: the calibrator's key and the signals it read) when a
    calibrator exists for this method and model; leave it None otherwise."""
    if pred.confidence is not None:
        return
    found = load_calibrator(method, model)
    signals = prediction_signals(pred)
    if found is None:
        pred.extra["confidence"] = {"calibrated_for": None, "signals": signals}
        return
    key, cal = found
    pred.confidence = round(cal.probability(signals), 4) if pred.answers else 0.0
    pred.extra["confidence"] = {"calibrated_for": key, "threshold": cal.threshold, "signals": signals}


def default_threshold(pred: Prediction) -> float | None:
    """The shipped calibrator's abstention threshold for this prediction, when it has one."""
    info = pred.extra.get("confidence") or {}
    return info.get("threshold")


def abstention(pred: Prediction, min_confidence: float | None = None) -> tuple[bool, list[str]]:
    """Whether to answer "not found in the graph" (confidence below ``min_confidence``, default the calibrator's
    threshold; no answer at all), and why: the :data:`REASONS` whose signals pulled the confidence down
    (:meth:`Calibrator.contributions`, most first), or the plain facts when there is no answer."""
    threshold = default_threshold(pred) if min_confidence is None else min_confidence
    if pred.answers and (pred.confidence is None or threshold is None or pred.confidence >= threshold):
        return False, []
    if not pred.answers:
        entity = pred.error is not None and "no graph node matches" in pred.error
        return True, [REASONS["no_entity" if entity else "no_path"]]
    s = prediction_signals(pred)
    cal = _calibrators(str(asset_path())).get((pred.extra.get("confidence") or {}).get("calibrated_for") or "")
    pulls: list[tuple[float, str]] = []
    if cal is not None:
        parts = cal.contributions(s)
        pulls = sorted((sum(parts.get(x, 0.0) for x in xs), r) for r, xs in REASON_SIGNALS.items())
    reasons = [REASONS[r] for total, r in pulls if total < 0]
    for fact, r in (("unchecked", "unchecked"), ("ev_unjoined", "unjoined")):
        if s.get(fact) and REASONS[r] not in reasons:
            reasons.append(REASONS[r])
    return True, reasons or [f"confidence {pred.confidence:.0%} is below {threshold:.0%}"]
