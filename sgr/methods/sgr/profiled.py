"""SGR over a profiled graph: a user's own labels, naming properties and literal properties (:mod:`sgr.graph.profile`).

The stages are SGR's (§3.1–3.4) with the profile in place of sgr's fixed shape:

1. **link** (V_q): :class:`sgr.retrieval.entities.ProfileLinker` maps the question's spans to nodes by each label's
   naming property (``title`` for a ``:Movie``, ``name`` for a ``:Person``).
2. **schema** (R_q, C_q): :class:`sgr.retrieval.keys.KeyAligner` finds the relationship types, property keys and
   labels the question names; the rules of :mod:`sgr.core.lexicon` find its constraints — a comparison on a
   property (``released > 2000``, ``rating > 80``; a year compares the answer label's year property), an order
   (``highest rated`` → ``ORDER BY rating DESC``, ``oldest`` → the year property ascending), a count.
3. **plans**: :func:`plans` turns the schema into :class:`cypher.compile.PropertyQuery` candidates, best first —
   the relations walked from the entity in the order the question names them (nearest first), there and back for
   "with"/"other" (co-actors), the named node's own relation first for "worked with", an intersection for two
   named nodes, a literal of the named node for a lookup ("when was X born"); only hops the profile has.
4. **compiled answers**: each plan compiles to one parameterised Cypher query that runs read-only
   (:meth:`GraphStore.run_generated`: Neo4j's plan must be a read, timeout, row cap); the first plan whose query
   returns rows gives the compiled candidates (ties of an order kept), with the query and its walk as the evidence.
5. **the model's Cypher** (when a chat model is configured and the variant calls one): the profile's schema —
   labels with their properties, relationship patterns, the question's linked labels and aligned keys first
   (:meth:`GraphProfile.schema_lines`) — and the linked nodes go to the model (:func:`cypher.translate.
   profile_messages`); its query is checked (read-only, one statement, known relationship types; Neo4j's EXPLAIN)
   and repaired once on an error (:mod:`sgr.methods.sgr.profiled_model`), then runs read-only. Its values are
   grounded on the graph: a name is a node by the profile's naming properties and needs a walk of at most
   :data:`MAX_STEPS` hops from a linked node (its evidence); a literal needs a query that names a linked node.
   With ``lazy_verification`` (the default) the model is asked only when no plan returned rows: a compiled
   candidate is valid whatever the model says (below), so the model's query cannot change a compiled answer set.
6. **validate and vote**: :func:`sgr.methods.sgr.decision.decide` — the :Entity route's decision — over both
   sources (:func:`decision_inputs`): γ = C(p, G_q) with G_q the answering plan's walks (1 for its answers, 0 for
   a value no plan reached), δ the prior (no log-probabilities are asked for), v = μ·δ + (1 − μ)·γ; the compiled
   plan comes first in trust (the profile's schema-guided query, as the model's paths are on the :Entity route),
   so a compiled answer (v = 1 − μ/2 ≥ ε for μ ≤ 2(1 − ε)) is kept, and the model's answers, invalid without a
   plan's walk (γ 0 < ``gamma_min``), win only through the vote (ω = λ·ρ + (1 − λ)·η) when no plan found rows.
   ``answered_by`` in the prediction's ``extra`` says which source answered (``compiled``, ``llm``, ``vote``).

Without a chat model (``sgr-compiled``, or none configured) no model call is made and step 4 answers alone;
:func:`create` uses this route whenever the graph is not in sgr's ``:Entity`` shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from cypher.compile import CompiledQuery, PropertyQuery, PropertyStep
from cypher.repair import CypherGeneration
from cypher.validate import relationship_types_in
from sgr.core.errors import ConfigError, CypherError, EntityNotFound, LLMError
from sgr.core.lexicon import (ASKED, BINDING_WORDS, COMPARE, COMPARE_OPS, COUNT, EARLIEST, EXTREMES, LATEST, WHEN,
                              WHO, WHO_LAST, WORKED_WITH, is_co_word)
from sgr.core.types import Answer, Prediction, Question, ReasoningPath
from sgr.graph.profile import NUMBER_TYPES, GraphProfile, profile_for
from sgr.graph.store import GraphStore, quote_identifier
from sgr.llm.client import shared_llm
from sgr.methods.base import UsageMeter, llm_cache_option
from sgr.methods.sgr.config import NEEDS_LLM, SGRConfig, config_for_model
from sgr.methods.sgr.decision import Decision, DecisionInputs, DecisionParams, decide
from sgr.methods.sgr.grounding import NodeKeys, row_values
from sgr.methods.sgr.profiled_model import answer_key, decision_inputs, ground_model_values, model_query
from sgr.retrieval.entities import LinkedEntity, ProfileLinker
from sgr.retrieval.keys import KeyAligner, KeyMention
from sgr.retrieval.mentions import question_words

#: Longest walk a plan takes from a named node.
MAX_STEPS = 3
#: The words after a relation noun that a label word before it modifies ("film genre *is* X", "movie co-writers *of*
#: X"), where a verb would take its object ("which person directed X"). Checked on: MetaQA dev (1- and 2-hop).
MODIFIED_BEFORE = frozenset({"is", "are", "was", "were", "of", "for"})
#: A year property's values lie in this range (a numeric property whose every value does is a year).
YEAR_RANGE = (1000, 2200)


@dataclass
class Schema:
    """The question schema on a profiled graph: entities, key mentions and constraints found by rules."""

    words: list[str]
    entities: list[LinkedEntity]
    mentions: list[KeyMention]
    count: bool = False
    compare: tuple[str, float, int] | None = None  # (operator, value, word position)
    extreme: tuple[str, bool, int] | None = None  # (cue, descending, word position)
    co: bool = False
    worked_with: bool = False
    asks_time: bool = False
    asks_person: bool = False


@dataclass
class ProfiledResult:
    """The trace of one question: schema, the plans tried, the query that answered and its rows."""

    question: Question
    schema: Schema | None = None
    plans: list[PropertyQuery] = field(default_factory=list)
    query: CompiledQuery | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    prediction: Prediction | None = None
    compiled: list[Answer] = field(default_factory=list)  # the answering plan's answers, in its order
    plan: PropertyQuery | None = None  # the plan that answered
    generation: CypherGeneration | None = None  # the model's Cypher, every round
    model: list[Answer] = field(default_factory=list)  # the model's grounded answers
    inputs: DecisionInputs | None = None
    decision: Decision | None = None


def cue_position(pattern: re.Pattern, text: str, words: list[str]) -> int | None:
    """The word index where ``pattern`` first matches ``text`` (None when it does not)."""
    m = pattern.search(text)
    return None if m is None else len(question_words(text[:m.start()]))


def read_schema(question: str, entities: list[LinkedEntity], aligner: KeyAligner) -> Schema:
    """Words, key mentions outside the entity names, and the constraint cues of ``question``."""
    words = question_words(question)
    inside = {i for e in entities for i in range(*e.span)}
    s = Schema(words, entities, aligner.align(words, inside))
    outside = " ".join(w for i, w in enumerate(words) if i not in inside)
    lower = [w.lower() for w in words]
    s.count = bool(COUNT.search(outside))
    m = COMPARE.search(outside)
    if m:
        value = float(m.group(2))
        s.compare = (COMPARE_OPS[m.group(1).lower()], int(value) if value.is_integer() else value,
                     cue_position(COMPARE, outside, words) or 0)
    for i, w in enumerate(lower):
        if i in inside:
            continue
        two = " ".join(lower[i:i + 2])
        if two in LATEST:
            s.extreme = (two, True, i)
        elif w in EARLIEST or w in LATEST:
            s.extreme = (w, w in LATEST, i)
        elif w in EXTREMES and not (w == "most" and two in LATEST):
            s.extreme = (w, EXTREMES[w], i)
        if s.extreme:
            break
    s.co = any(is_co_word(w) for i, w in enumerate(lower) if i not in inside)
    s.worked_with = bool(WORKED_WITH.search(outside))
    s.asks_time = bool(WHEN.search(question)) and not s.count
    s.asks_person = bool(WHO.search(question) or WHO_LAST.search(question))
    return s


class ProfiledAnswerer:
    """SGR's stages over a profiled graph (see the module docstring); an :class:`sgr.core.types.Answerer`."""

    def __init__(self, store: GraphStore, llm: Any = None, *, name: str = "sgr", profile: GraphProfile | None = None,
                 config: SGRConfig | None = None) -> None:
        self.store = store
        self.name = name
        self.llm = llm
        self.config = config or SGRConfig()
        self.profile = profile or profile_for(store)
        self.linker = ProfileLinker(store, self.profile)
        self.aligner = KeyAligner(self.profile)
        self.meter = UsageMeter(store, llm)
        self.max_answers = self.config.max_answers
        self.name_keys = list(dict.fromkeys(lp.name_property for lp in self.profile.entity_labels()))
        self.node_keys = NodeKeys.for_names(self.name_keys)
        self._years: dict[str, list[str]] = {}

    @cached_property
    def person_label(self) -> str | None:
        """The label "who" asks for: the one most like "person" (the encoder's first use, on the first question)."""
        return self.aligner.label_for("person")

    # -- Answerer ---------------------------------------------------------------------------------------------------
    def answer(self, question: Question) -> Prediction:
        try:
            return self.run(question).prediction
        except EntityNotFound as exc:
            return Prediction(question_id=question.id, method=self.name, error=str(exc),
                              extra={"profile": self.profile.shape})

    def run(self, question: Question) -> ProfiledResult:
        result = ProfiledResult(question)
        pred = Prediction(question_id=question.id, method=self.name, extra={"profile": self.profile.shape})
        result.prediction = pred
        with self.meter.measure() as usage:
            with self.meter.stage("link"):
                entities = (self.linker.link_given(question.text, question.topic_entities) if question.topic_entities
                            else self.linker.link_question(question.text))
            if not entities:
                raise EntityNotFound("no graph node matches the question's entities (names compared: " + ", ".join(
                    f"{lp.label}.{lp.name_property}" for lp in self.profile.entity_labels()) + ")")
            with self.meter.stage("schema"):
                result.schema = read_schema(question.text, entities, self.aligner)
                result.plans = self.plans(result.schema)
            with self.meter.stage("direct"):
                self.validate(result)
            if self.llm is not None and (not self.config.lazy_verification or not result.compiled):
                with self.meter.stage("cypher"):
                    self.model_cypher(question, result)
                if result.model:
                    with self.meter.stage("validate"):
                        self.decide(result)
        pred.usage = usage
        pred.extra["answered_by"] = ("compiled" if result.decision is None and result.compiled else
                                     result.decision.stage if result.decision is not None else None)
        pred.extra["entities"] = [{"name": e.name, "labels": e.labels, "id": e.id} for e in entities]
        pred.extra["keys"] = [f"{m.kind}:{m.key}" for m in result.schema.mentions]
        pred.extra["plans"] = len(result.plans)
        return result

    # -- plans ------------------------------------------------------------------------------------------------------
    def year_properties(self, label: str) -> list[str]:
        """The numeric properties of ``label`` whose values all lie in :data:`YEAR_RANGE` (asked once per label)."""
        if label not in self._years:
            lp = self.profile.labels.get(label)
            found = []
            for p in lp.numeric() if lp else []:
                row = self.store.read(f"MATCH (n:{quote_identifier(label)}) WHERE n.{quote_identifier(p)} IS NOT NULL "
                                      f"RETURN min(n.{quote_identifier(p)}) AS lo, max(n.{quote_identifier(p)}) AS hi")
                if row and row[0]["lo"] is not None and YEAR_RANGE[0] <= row[0]["lo"] <= row[0]["hi"] <= YEAR_RANGE[1]:
                    found.append(p)
            self._years[label] = found
        return self._years[label]

    def plans(self, s: Schema) -> list[PropertyQuery]:
        """Candidate queries for the schema, best first (see the module docstring)."""
        seed = s.entities[0]
        label = seed.labels[0] if seed.labels else ""
        rels = [m for m in s.mentions if m.kind == "relationship"]
        # a property only a relationship type has ("rating" of REVIEWED) names that relationship too
        node_props = {p for lp in self.profile.labels.values() for p in lp.properties}
        for m in s.mentions:
            if m.kind == "property" and m.key not in node_props:
                rels.append(KeyMention(m.position, m.word, "relationship", m.owner, m.owner, m.score))
        ordered = self.relation_order(rels, seed, s.words, {m.position for m in s.mentions if m.kind == "label"})
        wanted = self.answer_label(s)
        asked = self.answer_label(s, asked=True)
        out: list[PropertyQuery] = []
        if not ordered and not s.worked_with:
            lookup = self.lookup(s, seed, label)
            if lookup is not None:
                out.append(lookup)
        for steps in self.walks(s, seed, label, ordered, wanted, asked):
            out.append(self.finish(s, seed, steps))
        if len(s.entities) > 1 and ordered:
            out = [self.joined(s, q) for q in out] + out
        if out and out[0].steps:  # widened last: each hop of the best plan along any type between its labels
            out.append(self.widened(out[0], label))
        return out

    def widened(self, q: PropertyQuery, label: str) -> PropertyQuery:
        """``q`` with each hop along every relationship type the profile has between the same labels, same way."""
        steps, frm = [], label
        for st in q.steps:
            types = tuple(dict.fromkeys(t for t, d, to in self.profile.steps_from(frm)
                                        if d == st.direction and to == st.to))
            steps.append(PropertyStep(types or st.types, st.direction, st.to))
            frm = st.to
        return PropertyQuery(q.seeds[:1], steps, q.name_key, q.project, [], q.condition, q.order, q.count)

    def relation_order(self, rels: list[KeyMention], seed: LinkedEntity, words: list[str],
                       labels: set[int] = frozenset()) -> list[KeyMention]:
        """The relations named, nearest the entity first, each once; a verb right after the entity ("X written movies")
        binds first, else the relation joined to it by "by", "of" or "with" ("acted by X", "the director of X", "share
        actors with the movie X"; articles and label words such as "movie" between them skipped)."""
        start, end = seed.span
        i = start - 1
        while i >= 0 and (words[i].lower() in ("the", "a", "an") or i in labels):
            i -= 1
        bound = None
        after = next((m.position for m in rels if m.position == end), None)
        if after is not None and (after + 1 >= len(words) or words[after + 1].lower() not in ("who", "what", "which")):
            bound = after  # "X written movies", "X acted in": the verb right after the entity ("X starred who": not)
        elif i > 0 and words[i].lower() in BINDING_WORDS:
            bound = max((m.position for m in rels if m.position < i), default=None)

        def distance(m: KeyMention) -> tuple[float, int]:
            if m.position == bound:
                return (-1, m.position)
            return (start - m.position if m.position < start else m.position - end + 1, m.position)

        out: list[KeyMention] = []
        for m in sorted(rels, key=distance):
            if not any(o.key == m.key for o in out):
                out.append(m)
        return out

    def answer_label(self, s: Schema, *, asked: bool = False) -> str | None:
        """The label the question names ("the first movie of X"), else None; ``asked``: only right after its
        wh-word ("which movies …", "in what films …")."""
        inside = {i for e in s.entities for i in range(*e.span)}
        labels = [m for m in s.mentions if m.kind == "label" and m.position not in inside]
        if asked:
            labels = [m for m in labels if self.asked_noun(s, m)]
        return labels[0].key if labels else None

    @staticmethod
    def asked_noun(s: Schema, m: KeyMention) -> bool:
        """Whether ``m`` is the noun the question asks for ("*which actors* starred in X", "who is *the director*
        that directed X": :data:`~sgr.core.lexicon.ASKED`); not a label word that modifies the relation noun after it
        ("what *film* genre is X", "who are *movie* co-directors of X": :data:`MODIFIED_BEFORE`)."""
        at = m.position + 1
        if (m.kind == "label" and at + 1 < len(s.words) and s.words[at + 1].lower() in MODIFIED_BEFORE
                and any(o.position == at and o.kind == "relationship" for o in s.mentions)):
            return False
        if m.position > 0 and s.words[m.position - 1].lower() in ("which", "what"):
            return True
        found = ASKED.match(" ".join(s.words))
        return found is not None and m.position == len(question_words(" ".join(s.words)[:found.start(1)]))

    def steps_for(self, frm: str, key: str, seed_first: bool | None) -> list[PropertyStep]:
        """The hops of relationship type ``key`` from a node of ``frm`` (both directions when the profile has both;
        ``seed_first`` True puts ``out`` first: the named node is the subject)."""
        steps = [PropertyStep((t,), d, to) for t, d, to in self.profile.steps_from(frm) if t == key]
        if seed_first is not None:
            steps.sort(key=lambda st: (st.direction != "out") if seed_first else (st.direction == "out"))
        return steps

    def walks(self, s: Schema, seed: LinkedEntity, label: str, rels: list[KeyMention], wanted: str | None,
              asked: str | None) -> list[list[PropertyStep]]:
        """Walks from the seed, best first: ``wanted`` the label the question names, ``asked`` the one it asks for
        (for "who": the label most like "person"); walks that end at the label asked for come first."""
        keys = [m.key for m in rels]
        back = False
        if s.worked_with:  # the named node's own relation, then the one asked about
            own = self.own_relations(seed)
            if own:
                keys = [own[0]] + [k for k in keys[:1]] if keys else [own[0], own[0]]
        elif keys and len(s.entities) == 1 and (s.co or sum(m.key == keys[0] and not self.asked_noun(s, m)
                                                            for m in s.mentions) > 1):
            keys, back = [keys[0], *keys], True  # "acted with X", "the director of X also directed": there and back
        if not keys:  # no relation named: any relationship to the label asked for
            if wanted is None:
                return []
            types = tuple(dict.fromkeys(t for t, _, to in self.profile.steps_from(label) if to == wanted))
            dirs = {d for t, d, to in self.profile.steps_from(label) if to == wanted}
            return [[PropertyStep(types, d, wanted)] for d in sorted(dirs, reverse=True)] if types else []
        lower = [w.lower() for w in s.words]
        subject = None
        if rels:  # "X follows Y": X the subject; "who follows X", "produced by X": X the object
            first = rels[0].position
            subject = (first > seed.span[0]) or (first + 1 < len(lower) and lower[first + 1] == "by")
        walks = self.build(label, keys, subject)
        if asked is not None and len(set(keys)) == 1:  # "the movies the actors of X act in": on to the label asked
            walks = [w + [b] for w in walks if w and w[-1].to != asked
                     for b in self.steps_for(w[-1].to, keys[0], None)
                     if b.to == asked and b.direction != w[-1].direction] + walks
        if not back and len(s.entities) == 1 and not s.worked_with:  # "movies for the director of X": there and back
            walks += self.build(label, [keys[0], *keys], subject)
        expected = asked or (self.person_label if s.asks_person else None)
        return sorted(walks, key=lambda w: expected is not None and w[-1].to != expected)  # stable: order kept

    def build(self, label: str, keys: list[str], subject: bool | None) -> list[list[PropertyStep]]:
        """Every walk from ``label`` along ``keys`` in turn (a key repeated goes back the other way)."""
        walks: list[list[PropertyStep]] = [[]]
        for n, key in enumerate(keys[:MAX_STEPS]):
            grown = []
            for walk in walks:
                options = self.steps_for(walk[-1].to if walk else label, key, subject if n == 0 else None)
                if n == 1 and keys[0] == keys[1]:  # there and back: the other direction
                    options = [o for o in options if o.direction != walk[0].direction] or options
                grown += [walk + [o] for o in options]
            walks = grown or walks
        return [w for w in walks if w]

    def own_relations(self, seed: LinkedEntity) -> list[str]:
        """The relationship types at the seed, most frequent first."""
        rows = self.store.read("MATCH (s)-[r]-() WHERE elementId(s) = $id RETURN type(r) AS t, count(*) AS n "
                               "ORDER BY n DESC, t", {"id": seed.id})
        return [r["t"] for r in rows]

    def lookup(self, s: Schema, seed: LinkedEntity, label: str) -> PropertyQuery | None:
        """A literal of the named node ("when was X born", "the tagline of X")."""
        lp = self.profile.labels.get(label)
        if lp is None:
            return None
        props = [m.key for m in s.mentions if m.kind == "property" and m.key in lp.properties]
        if not props and s.asks_time:
            props = self.year_properties(label)
        if not props:
            return None
        return PropertyQuery([seed.id], [], lp.name_property, project=props[0])

    def finish(self, s: Schema, seed: LinkedEntity, steps: list[PropertyStep]) -> PropertyQuery:
        """A walk with the schema's projection, condition, order and count."""
        end = steps[-1].to
        lp = self.profile.labels.get(end)
        rel_props = self.profile.relationship_properties(steps[-1].types[0]) if len(steps[-1].types) == 1 else {}
        q = PropertyQuery([seed.id], steps, lp.name_property if lp else None, count=s.count)
        numeric = [(m, "x") for m in s.mentions if m.kind == "property" and lp and m.key in lp.numeric()]
        numeric += [(m, "r") for m in s.mentions if m.kind == "property" and rel_props.get(m.key) in NUMBER_TYPES]
        years = self.year_properties(end)
        if s.compare is not None:
            op, value, at = s.compare
            near = sorted(numeric, key=lambda t: abs(t[0].position - at))
            if near:
                q.condition = (near[0][1], near[0][0].key, op, value)
            elif years:
                q.condition = ("x", years[0], op, value)
        if s.extreme is not None:
            cue, desc, at = s.extreme
            near = sorted(numeric, key=lambda t: abs(t[0].position - at))
            if cue in EXTREMES and near:
                q.order = (near[0][1], near[0][0].key, desc)
            elif years:
                q.order = ("x", years[0], desc)
        if not s.count and lp is not None and q.condition is None and q.order is None:
            last_rel = max((m.position for m in s.mentions if m.kind == "relationship"), default=0)
            asked_label = self.answer_label(s, asked=True)
            asked = [m.key for m in s.mentions if m.kind == "property" and m.key in lp.properties
                     and (m.position > max(seed.span[1], last_rel) or asked_label not in (None, end))
                     or (m.kind == "property" and m.key in lp.properties and asked_label is None)]
            if asked:
                q.project = asked[0]
            elif s.asks_time and years:
                q.project = years[0]
        return q

    def joined(self, s: Schema, q: PropertyQuery) -> PropertyQuery:
        """``q`` with the second named node joined at the answer by the same last hop ("movies X and Y act in")."""
        other = s.entities[1]
        last = q.steps[-1] if q.steps else None
        if last is None:
            return q
        join = [PropertyStep(last.types, last.direction, last.to)]
        base = PropertyQuery([q.seeds[0], other.id], q.steps, q.name_key, q.project, join, q.condition, q.order,
                             q.count)
        wanted_person = s.asks_person and last.to != (other.labels[0] if other.labels else None)
        if wanted_person or (s.co and self.answer_label(s, asked=True) not in (None, last.to)):
            back = self.steps_for(last.to, last.types[0], False)
            back = [b for b in back if b.direction != last.direction] or back
            if back:
                lp = self.profile.labels.get(back[0].to)
                return PropertyQuery(base.seeds, [*q.steps[:-1], last, back[0]], lp.name_property if lp else None,
                                     None, [*join[:-1], PropertyStep(last.types, last.direction, last.to), back[0]],
                                     count=q.count)
        return base

    # -- validate and answer ----------------------------------------------------------------------------------------
    def validate(self, result: ProfiledResult) -> None:
        """Run the plans in order; the first that returns rows answers."""
        pred = result.prediction
        for plan in result.plans:
            compiled = plan.compile(self.max_answers)
            try:
                rows = compiled.run(self.store).rows
            except CypherError as exc:
                pred.extra.setdefault("rejected", []).append(str(exc))
                continue
            pred.cypher.append(compiled.inline())
            rows = [r for r in rows if r.get("answer") is not None]
            if plan.order is not None and rows:
                best = rows[0]["key"]
                rows = [r for r in rows if r["key"] == best]
            if plan.count and rows and rows[0]["answer"] == 0 and plan is not result.plans[-1]:
                continue
            if rows:
                result.query, result.rows, result.plan = compiled, rows, plan
                pred.route = "direct"
                ids = [r["id"] for r in rows if r.get("id")][:50]
                walks = self.walk_paths(plan, [] if plan.count else ids)
                ending: dict[str, list[ReasoningPath]] = {}
                for w in walks:
                    ending.setdefault(w.nodes[-1], []).append(w)
                for r in rows:
                    text, node = str(r["answer"]), r.get("id")
                    paths = ending.get(node, []) if node and not plan.count else []
                    pred.answers.append(Answer(text, node if plan.project is None else None, 1.0, paths[:3]))
                pred.paths = walks[:10] if not plan.count else walks
                pred.extra["redraw"] = plan.redraw([r["id"] for r in rows if r.get("id")][:50]).inline()
                result.compiled = list(pred.answers)
                return
        pred.extra["unanswered"] = "no plan's query returned rows"

    # -- the model's Cypher, validated, and the decision ------------------------------------------------------------
    def model_cypher(self, question: Question, result: ProfiledResult) -> None:
        """The model's query and its grounded values (module docstring, step 5; :mod:`sgr.methods.sgr.profiled_model`)."""
        pred = result.prediction
        result.generation = gen = model_query(self.llm, self.store, self.profile, question.text,
                                              result.schema.entities, result.schema.mentions, self.config)
        pred.extra["llm_cypher"] = {"rounds": len(gen.attempts), "ran": gen.final is not None,
                                    "problems": [p.message for a in gen.attempts for p in a.problems
                                                 if p.blocking or p.kind == "runtime"][:4]}
        if gen.final is not None:
            pred.cypher.insert(0, gen.final.query)  # the last query is the one that answered (compiled, when it did)
            result.model = ground_model_values(self.store, self.linker, self.node_keys, gen.final.query,
                                               row_values(gen.final.rows or [], self.name_keys),
                                               result.schema.entities, self.max_answers, MAX_STEPS)

    def decide(self, result: ProfiledResult) -> None:
        """Validate and vote over the compiled and the model's answers (:func:`decision_inputs`, :func:`decide`)."""
        pred, plan = result.prediction, result.plan
        compiled_pattern = tuple(t for st in plan.steps for t in st.types) if plan is not None else ()
        model_pattern = tuple(relationship_types_in(result.generation.final.query)) if result.generation else ()
        result.inputs = decision_inputs(result.compiled, compiled_pattern, result.model, model_pattern,
                                        self.config.prior_confidence)
        result.decision = d = decide(result.inputs, DecisionParams.from_config(self.config))
        by_key = {answer_key(a): a for a in result.model} | {answer_key(a): a for a in result.compiled}
        pred.answers = [Answer(by_key[a.key].text, by_key[a.key].id, round(a.score, 4), by_key[a.key].paths)
                        for a in d.answers]
        if d.answers and d.stage != "compiled":
            pred.route = d.route
            pred.paths = [p for a in pred.answers for p in a.paths[:1]] + pred.paths
            if pred.cypher and result.generation and result.generation.final is not None:  # the model's query last
                pred.cypher.remove(result.generation.final.query)
                pred.cypher.append(result.generation.final.query)
            pred.extra.pop("unanswered", None)
        pred.extra["route_source"] = d.route_source
        pred.extra["decision"] = d.summary()

    def walk_paths(self, plan: PropertyQuery, answer_ids: list[str]) -> list[ReasoningPath]:
        """The walks of ``plan`` to ``answer_ids`` (every walk when empty), named by the profile's naming properties:
        the evidence (:meth:`cypher.compile.PropertyQuery.walks`)."""
        names = {lb: lp.name_property for lb, lp in self.profile.labels.items() if lp.name_property}
        compiled = plan.walks(answer_ids, names)
        return [ReasoningPath(r["ids"], r["types"], 1.0, r["names"], r["dirs"], source="profiled")
                for r in self.store.read(compiled.cypher, compiled.params)]


def for_profiled_graph(ctx: Any, name: str, config: SGRConfig,
                       options: dict[str, Any] | None = None) -> ProfiledAnswerer | None:
    """The answerer SGR variant ``name`` is on ``ctx.store`` (a :class:`sgr.methods.base.MethodContext`) when its
    profile is not sgr's own shape, else None; its chat model as :func:`profiled_llm` says."""
    profile = profile_for(ctx.store)
    if profile.is_entity_shape:
        return None
    config, llm = profiled_llm(name, config, ctx, options or {})
    return ProfiledAnswerer(ctx.store, llm, name=name, profile=profile, config=config)


def profiled_llm(variant: str, cfg: SGRConfig, ctx: Any, options: dict[str, Any]) -> tuple[SGRConfig, Any]:
    """The config and chat model of ``variant`` on a profiled graph: the model writes Cypher there (no schema stage),
    so only variants with ``use_llm_cypher`` get one — ctx's, else the configured one, else none (the compiled plans
    answer alone, as without a model configured at all)."""
    llm = getattr(ctx, "llm", None)
    if llm is None and variant in NEEDS_LLM and cfg.use_llm_cypher:
        try:
            llm = shared_llm(cache=llm_cache_option(options, "sgr"))
        except LLMError:
            llm = None
    cfg = config_for_model(cfg, options, getattr(llm, "name", None))
    return cfg, llm if cfg.use_llm_cypher else None


def check_runs_on(store: GraphStore, method: str) -> None:
    """ConfigError, one line, when ``method`` cannot answer on ``store``'s graph: on a profiled graph only SGR's
    variants (this route) and ``llm-only`` (no graph) run; SCR, RCR and the baselines read sgr's own ``:Entity`` shape
    (SCR's network is trained on it)."""
    from sgr.methods.sgr.config import VARIANTS

    if method in VARIANTS or method == "llm-only":
        return
    profile = profile_for(store)
    if not profile.is_entity_shape:
        labels = ", ".join(sorted(profile.labels)[:4])
        raise ConfigError(f"{method} runs on sgr's own :Entity graphs only (it reads that shape; SCR's network is "
                          f"trained on it), and this graph has its own labels ({labels}): ask with an SGR variant "
                          "(sgr, sgr-compiled, …)")
