"""Training questions from the graph itself, for a graph that has no labelled questions (``--from-graph``).

``sgr llm tune --from-graph N`` and ``sgr relations train --dataset graph`` learn from questions written here
instead of a benchmark's:

1. **Walks** (:func:`sample_walks`): a seeded sample of named start entities; from each, a walk of ``h`` hops,
   as many walks of each length 1..``max_hops`` (a long walk dead-ends more often; it is tried again at the same
   length, so the lengths stay even). Each step picks a relationship type (and direction) uniformly among
   those at the current node — not an edge uniformly, so a hub's one large type does not take every walk — then a
   neighbour along it. **CVT-aware**: a compound-value node (``:CVT``, no name) is not a hop; the walk goes on
   through it by another relation in the same step, so ``person -spouse_s-> cvt -spouse-> person`` is one hop of
   two relations, as RoG's gold paths are written. A walk never revisits a node and never leaves a CVT by the
   relation it entered by; from a named node it may go on along the same relation to another node (``film
   -directed_by-> director <-directed_by- film``: "the films that share a director with X", MetaQA's commonest
   2-hop kind, which the walks missed while this step was barred: MetaQA dev, ``bench/models.py from-graph``). It
   skips sgr's own ``SGR_*`` types, the noise relations of
   :data:`sgr.core.lexicon.NOISE_RELATIONS` and Freebase's bookkeeping
   (:data:`sgr.core.lexicon.BOOKKEEPING_PREFIXES`), and must end on a named node other than its start.
2. **Questions** (:func:`question_text`): phrasings of the relations' words around the start entity's name
   (:class:`Wording`). A Freebase name ``domain.type.property`` gives the property's words and the type's
   (``film.film.directed_by`` → "directed by", "film"); a plain name gives its words (``starred_actors`` →
   "starred actors"). A forward step reads "the P of X", "X's P" or, for a participle ("directed by"), "the one X
   was directed by"; a backward one "the T whose P is X", "the Ts directed by X", "the Ts with genre X" (a leading
   "has"/"in" dropped where the property is a noun). Two hops there and back along one relation read as sharing
   ("the ones directed by the same one as X", "the others who share ones with X"). Each step draws one phrasing
   with the walk's seed; the outermost phrase is asked as a question ("what are …?", "who is …?", "name ….") or,
   for half of the composed walks, after the inner phrase ("the ones directed by X have which starred actors?",
   "… were written by who?"). Several phrasings rather than one template: a model tuned on "the one whose directed
   by is X" alone wrote the gold 2-hop path for 0.12 of 50 MetaQA dev questions, on these phrasings for 0.72
   (``bench/experiments/models.md``). A CVT step is worded by the relation that leaves the CVT.
3. The **target** is the walk's relation path (every relation, CVT ones included), the topic the start entity:
   :class:`sgr.retrieval.supervision.RelationExample` ``(question, (path,), hops, topics=(name,))``.

No question of any dataset is read. Measured in ``bench/models.py`` (``from_graph/…`` of
``bench/results/models.json``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sgr.core.errors import InputError
from sgr.core.lexicon import BOOKKEEPING_PREFIXES, NOISE_RELATIONS
from sgr.graph.store import GraphStore, quote_identifier, relation_text
from sgr.retrieval.supervision import RelationExample

#: edges read at one node to list its relationship types (a hub costs no more)
EDGE_SAMPLE = 2000
#: neighbours read along the chosen type, one of which is the next node
NEIGHBOUR_SAMPLE = 100
#: named entities read as candidate starts (a seeded sample of them is walked)
START_POOL = 200_000


@dataclass(frozen=True)
class Step:
    """One hop of a walk: its relations (two through a CVT) and their directions (``out``: stored from the node
    the walk was at)."""

    relations: tuple[str, ...]
    directions: tuple[str, ...]


@dataclass
class GraphWalk:
    """A walk from a named start entity over ``steps``, ending at ``end`` (a named node)."""

    start: str  # the start entity's name
    start_id: str
    steps: list[Step] = field(default_factory=list)
    end: str = ""

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(r for s in self.steps for r in s.relations)


def relation_words(name: str) -> tuple[str, str | None]:
    """``(property words, type words or None)``: ``film.film.directed_by`` → ``("directed by", "film")``;
    ``starred_actors`` → ``("starred actors", None)``."""
    parts = name.split(".")
    if len(parts) >= 3:
        return relation_text(parts[-1]), relation_text(parts[-2])
    return relation_text(name), None


#: a property's leading verb, dropped where the property is used as a noun (``has_genre`` → "genre")
LEAD_VERBS = ("has", "have", "is", "in")


@dataclass(frozen=True)
class Wording:
    """How one relation reads as an English phrase: ``words`` (``"directed by"``), ``noun`` (what the value is
    called: ``has_genre`` → ``"genre"``; None for a participle ``… by``, whose value has no noun in its words) and
    ``kind`` (the type of the node the relation leaves, from a Freebase ``domain.type.property`` name; ``"one"``
    where the name has none)."""

    words: str
    noun: str | None
    kind: str

    @classmethod
    def of(cls, relation: str) -> Wording:
        words, kind = relation_words(relation)
        first, _, rest = words.partition(" ")
        noun = None if words.endswith(" by") else rest if first in LEAD_VERBS and rest else words
        return cls(words, noun, kind or "one")

    @property
    def kinds(self) -> str:
        return self.kind + "s"

    def forward(self, x: str, *, named: bool = False) -> list[str]:
        """Noun phrases for "the value of this relation at ``x``" (``named``: ``x`` is an entity's name, which may
        take a possessive)."""
        if self.noun is None:
            return [f"the one {x} was {self.words}", f"whoever {x} was {self.words}", f"the {self.words} of {x}"]
        return [f"the {self.noun} of {x}", *([f"{x}'s {self.noun}"] if named else []),
                *([f"the {self.words} of {x}"] if self.noun != self.words else [])]

    def backward(self, x: str) -> list[str]:
        """Noun phrases for "the nodes whose value of this relation is ``x``"."""
        out = [f"the {self.kind} whose {self.words} is {x}"]
        if self.noun is None:
            out += [f"the {self.kinds} {self.words} {x}", f"the {self.kinds} that were {self.words} {x}"]
        else:
            out += [f"the {self.kinds} with {self.noun} {x}", f"the {self.kinds} with {x} as {self.noun}",
                    f"the {self.kinds} whose {self.noun} include {x}"]
        if self.words.startswith("in "):
            out.append(f"the {self.kinds} in {x}")
        return out

    def shared(self, x: str, out: bool) -> list[str]:
        """Noun phrases for a hop there and back along this relation (``x -r-> v <-r- y`` when ``out``, else
        ``x <-r- v -r-> y``): the others that share a value with ``x``, or a node with ``x``."""
        if out:
            if self.noun is None:
                return [f"the {self.kinds} {self.words} the same one as {x}", f"the other {self.kinds} {self.words} "
                        f"whoever {x} was {self.words}"]
            return [f"the {self.kinds} with the same {self.noun} as {x}",
                    f"the {self.kinds} sharing {x}'s {self.noun}"]
        return [f"the others who share {self.kinds} with {x}",
                f"the {self.noun or 'ones'} sharing {self.kinds} with {x}"]

    def asked_after(self, x: str, out: bool) -> list[str]:
        """Questions that name ``x`` first and ask for this relation's value last ("the films written by X were
        directed by who?"): people put the inner phrase of a composed question before or after what they ask."""
        if not out:
            verb = f"were {self.words}" if self.noun is None else f"have {self.noun}"
            return [f"which {self.kinds} {verb} {x}?"]
        if self.noun is None:
            return [f"{x} were {self.words} who?", f"{x} were {self.words} what?"]
        return [f"{x} have which {self.noun}?", f"what {self.noun} do {x} have?", f"for {x}, what is the {self.noun}?"]


def _there_and_back(a: Step, b: Step) -> bool:
    """Two hops along one relation, out and back (``film -directed_by-> d <-directed_by- film``)."""
    return len(a.relations) == len(b.relations) == 1 and a.relations == b.relations and a.directions != b.directions


#: the outermost phrase as a question (``N``: the noun phrase of the walk's end)
QUESTIONS = ("what is {N}?", "what are {N}?", "which are {N}?", "who is {N}?", "who are {N}?", "name {N}.",
             "{N}?", "tell me {N}.")


def question_text(walk: GraphWalk, rng: random.Random) -> str:
    """The walk as a question (module docstring, step 2); ``rng`` picks the phrasings."""
    inner, steps, i = walk.start, walk.steps, 0
    while i < len(steps):
        step, last = steps[i], i == len(steps) - 1
        wording, out = Wording.of(step.relations[-1]), step.directions[-1] == "out"  # a CVT step: the leaving one
        if not last and _there_and_back(step, steps[i + 1]):
            inner = rng.choice(wording.shared(inner, out))
            i += 2
            continue
        if last and i > 0 and rng.random() < 0.5:  # the inner phrase first, what is asked last
            return rng.choice(wording.asked_after(inner, out))
        inner = rng.choice(wording.forward(inner, named=i == 0) if out else wording.backward(inner))
        i += 1
    return rng.choice(QUESTIONS).format(N=inner)


# -- walking the graph in Neo4j -------------------------------------------------------------------
_TYPES = (f"MATCH (e:Entity {{id: $id}})-[r]-(x:Entity) WITH r, e LIMIT {EDGE_SAMPLE} "
          "RETURN DISTINCT type(r) AS rel, startNode(r) = e AS out")
_START_POOL = (f"MATCH (e:Entity) WHERE e.name IS NOT NULL AND NOT e:CVT RETURN e.id AS id, e.name AS name "
               f"LIMIT {START_POOL}")


def _neighbours(store: GraphStore, node: str, rel: str, out: bool) -> list[dict]:
    pattern = f"-[:{quote_identifier(rel)}]->" if out else f"<-[:{quote_identifier(rel)}]-"
    return store.read(f"MATCH (e:Entity {{id: $id}}){pattern}(x:Entity) RETURN x.id AS id, x.name AS name, "
                      f"x:CVT AS cvt LIMIT {NEIGHBOUR_SAMPLE}", {"id": node})


def _usable(rel: str) -> bool:
    return not rel.startswith(("SGR_", *BOOKKEEPING_PREFIXES)) and rel not in NOISE_RELATIONS


def _move(store: GraphStore, node: str, seen: set[str], came_by: tuple[str, bool] | None,
          rng: random.Random) -> tuple[str, bool, dict] | None:
    """One relation step from ``node``: ``(relation, out, neighbour row)`` or None when no step is possible;
    ``came_by``: the relation a CVT was entered by (not left by again), None at a named node."""
    types = [(r["rel"], bool(r["out"])) for r in store.read(_TYPES, {"id": node}) if _usable(r["rel"])]
    types = sorted({t for t in types if came_by is None or t != (came_by[0], not came_by[1])})
    rng.shuffle(types)
    for rel, out in types[:4]:  # a few tries: a type may lead only back to visited nodes
        rows = [r for r in _neighbours(store, node, rel, out) if r["id"] not in seen]
        if rows:
            return rel, out, rng.choice(rows)
    return None


def walk_from(store: GraphStore, start_id: str, start_name: str, hops: int, rng: random.Random) -> GraphWalk | None:
    """A CVT-aware walk of ``hops`` hops from one entity (module docstring, step 1), or None when it dead-ends."""
    walk = GraphWalk(start=start_name, start_id=start_id)
    node, seen = start_id, {start_id}
    for _ in range(hops):
        rels: list[str] = []
        dirs: list[str] = []
        came_by: tuple[str, bool] | None = None
        for _through in range(2):  # at most one CVT inside a step
            moved = _move(store, node, seen, came_by, rng)
            if moved is None:
                return None
            rel, out, row = moved
            rels.append(rel)
            dirs.append("out" if out else "in")
            node, came_by = row["id"], (rel, out)
            seen.add(node)
            if not row["cvt"]:
                break
        else:
            return None  # two CVTs in a row: not a walk SGR's grammar writes
        if row["name"] is None:
            return None
        walk.steps.append(Step(tuple(rels), tuple(dirs)))
        walk.end = row["name"]
    return walk if walk.end and walk.end != start_name else None


def sample_walks(store: GraphStore, n: int, *, max_hops: int = 3, seed: int = 0, tries: int = 4,
                 progress: Callable[[int], None] | None = None) -> list[GraphWalk]:
    """``n`` distinct walks (by start and path) from seeded start entities: ``n / max_hops`` of each length
    1..``max_hops`` (the first ``n mod max_hops`` lengths one more), fewer of a length the graph's walks keep
    dead-ending at (``tries`` attempts a walk in all)."""
    if n < 1 or max_hops < 1:
        raise InputError(f"--from-graph needs a positive number of questions and hops, got {n} and {max_hops}")
    pool = store.read(_START_POOL)
    if not pool:
        raise InputError("the graph has no named entities to start walks from: load data first (`sgr load …`)")
    rng = random.Random(seed)
    out: list[GraphWalk] = []
    keys: set[tuple[str, tuple[str, ...]]] = set()
    quota = {h: n // max_hops + (h <= n % max_hops) for h in range(1, max_hops + 1)}
    attempts = 0
    while len(out) < n and attempts < n * tries:
        attempts += 1
        hops = rng.choice([h for h, left in quota.items() if left > 0])
        start = rng.choice(pool)
        walk = walk_from(store, start["id"], start["name"], hops, rng)
        if walk is None or (walk.start_id, walk.path) in keys:
            continue
        keys.add((walk.start_id, walk.path))
        quota[hops] -= 1
        out.append(walk)
        if progress:
            progress(1)
    return out


def graph_questions(store: GraphStore, n: int, *, max_hops: int = 3, seed: int = 0,
                    progress: Callable[[int], None] | None = None) -> list[RelationExample]:
    """``n`` training questions written from the graph (module docstring): ids ``graph-<i>``."""
    rng = random.Random(seed + 1)
    return [RelationExample(id=f"graph-{i}", question=question_text(w, rng), paths=(w.path,), hops=len(w.steps),
                            topics=(w.start,))
            for i, w in enumerate(sample_walks(store, n, max_hops=max_hops, seed=seed, progress=progress))]


def describe(examples: Sequence[RelationExample], k: int = 3) -> list[str]:
    """A few examples as one line each (for logs)."""
    return [f"{e.question}  →  {' > '.join(e.paths[0])}" for e in examples[:k]]
