"""The graph profile: what sgr needs to know about a database it did not load.

sgr's own loaders write one shape (``(:Entity {id, name})``, one relationship type per relation, ``:CVT``); a user's
graph has its own labels and properties (Neo4j's movie graph: ``(:Movie {title, released, tagline})``,
``(:Person {name, born})``, ``ACTED_IN {roles}``, ``REVIEWED {summary, rating}``). A :class:`GraphProfile` says, per
label, which property names its nodes (``name``, ``title`` …; :data:`~sgr.core.lexicon.NAME_KEYS`), which properties
are literals (with Neo4j's type names), whether its nodes are compound-value nodes (no naming property), and which
relationship types join which labels, with their own literal properties.

* :func:`read_profile` derives one from Neo4j's own schema procedures (``db.labels``, ``db.relationshipTypes``,
  ``db.schema.nodeTypeProperties``, ``db.schema.relTypeProperties``; no APOC) plus a bounded sample of each
  relationship type's end labels. It writes nothing.
* :func:`load_profile` / :func:`save_profile` read and write the same profile as a small JSON file the user may edit
  (``sgr profile show --out FILE``; ``SGR_PROFILE=FILE`` makes sgr use it).
* :func:`profile_for` is what the methods call: the file named by ``SGR_PROFILE``, else the derived profile.
* sgr's own shape is :func:`entity_shape` (``shape == "entity"``): a graph with ``:Entity`` nodes (or an empty one)
  gets it, and the methods then behave exactly as they always have.
* :func:`create_name_indexes` creates full-text indexes on the naming properties — only when the user asked
  (``sgr profile index --yes``, or ``sgr load example``, which wrote the data itself); nothing else is written.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sgr.core.config import profile_file
from sgr.core.errors import ConfigError, InputError
from sgr.core.lexicon import NAME_KEYS
from sgr.graph.store import BOOKKEEPING_LABELS, CVT, ENTITY, EVIDENCE_REL, GraphStore, quote_identifier

#: Neo4j's property type names (``db.schema.*TypeProperties``) that hold numbers a condition may compare.
NUMBER_TYPES = frozenset({"Long", "Integer", "Double", "Float"})
#: Relationships sampled per type to find which labels it joins.
PATTERN_SAMPLE = 1000
PROFILE_VERSION = 1
SHAPES = ("entity", "property")


def identifier(name: str) -> str:
    """A label, type or property name as Cypher writes it: back-quoted only where it must be."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else quote_identifier(name)


@dataclass
class LabelProfile:
    """One label: its naming property (None: compound-value nodes), its literal properties → Neo4j type, its size."""

    label: str
    name_property: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    count: int = 0

    @property
    def compound(self) -> bool:
        return self.name_property is None

    def numeric(self) -> list[str]:
        return [p for p, t in self.properties.items() if t in NUMBER_TYPES]


@dataclass
class RelationshipProfile:
    """One relationship type between two labels (``start``-[type]->``end``) and its literal properties."""

    type: str
    start: str
    end: str
    properties: dict[str, str] = field(default_factory=dict)


@dataclass
class GraphProfile:
    """Labels and relationship patterns of one graph; ``shape`` is ``entity`` (sgr's loaders) or ``property``."""

    shape: str
    labels: dict[str, LabelProfile] = field(default_factory=dict)
    relationships: list[RelationshipProfile] = field(default_factory=list)
    source: str = "derived"
    created: list[str] = field(default_factory=list)  # full-text indexes sgr created for it (with consent)

    @property
    def is_entity_shape(self) -> bool:
        return self.shape == "entity"

    def entity_labels(self) -> list[LabelProfile]:
        """Labels whose nodes have a name (what linking searches), largest first."""
        return sorted((lp for lp in self.labels.values() if not lp.compound), key=lambda lp: (-lp.count, lp.label))

    def name_of(self, label: str) -> str | None:
        lp = self.labels.get(label)
        return lp.name_property if lp else None

    def steps_from(self, label: str) -> list[tuple[str, str, str]]:
        """Every hop a node of ``label`` can take: (type, ``out`` | ``in``, the other end's label), in profile order."""
        out: list[tuple[str, str, str]] = []
        for r in self.relationships:
            if r.start == label:
                out.append((r.type, "out", r.end))
            if r.end == label:
                out.append((r.type, "in", r.start))
        return out

    def relationship_properties(self, rtype: str) -> dict[str, str]:
        """The literal properties of relationship type ``rtype`` (over all its label pairs)."""
        return {p: t for r in self.relationships if r.type == rtype for p, t in r.properties.items()}

    def keys(self) -> list[str]:
        """The vocabulary a question is matched against: relationship types, then property keys (each once)."""
        props = [p for lp in self.labels.values() for p in lp.properties]
        props += [p for r in self.relationships for p in r.properties]
        return list(dict.fromkeys([r.type for r in self.relationships] + props))

    def schema_lines(self, first_labels: Sequence[str] = (), first_keys: Sequence[str] = ()) -> list[str]:
        """The schema as Cypher patterns, one a line: each label with its properties (the naming one first), then
        each relationship pattern with its properties; ``first_labels`` and the relationship types or property keys
        in ``first_keys`` lead (a question's linked nodes and the keys it names), the rest in profile order."""
        def props(properties: Mapping[str, str], first: str | None = None) -> str:
            names = sorted(properties, key=lambda p: p != first)
            return " {" + ", ".join(f"{identifier(p)}: {properties[p]}" for p in names) + "}" if names else ""

        labels = sorted(self.labels.values(), key=lambda lp: lp.label not in first_labels)
        named = set(first_keys)
        rels = sorted(self.relationships, key=lambda r: (r.type not in named and not named & set(r.properties),
                                                         r.start not in first_labels and r.end not in first_labels))
        return ([f"(:{identifier(lp.label)}{props(lp.properties, lp.name_property)})" for lp in labels]
                + [f"(:{identifier(r.start)})-[:{identifier(r.type)}{props(r.properties)}]->(:{identifier(r.end)})" for r in rels])

    def to_dict(self) -> dict[str, Any]:
        return {"version": PROFILE_VERSION, "shape": self.shape,
                "labels": {k: {"name_property": v.name_property, "properties": v.properties, "count": v.count}
                           for k, v in self.labels.items()},
                "relationships": [asdict(r) for r in self.relationships]}


def entity_shape() -> GraphProfile:
    """sgr's own shape: ``(:Entity {id, name})``, ``:CVT`` nodes without a name, one type per relation."""
    return GraphProfile("entity", {ENTITY: LabelProfile(ENTITY, "name", {"id": "String"}),
                                   CVT: LabelProfile(CVT, None, {"id": "String"})}, [], source="sgr")


def name_property(properties: Mapping[str, str]) -> str | None:
    """The naming property among ``properties`` (name → type): the first of :data:`NAME_KEYS` that holds strings."""
    by_lower = {p.lower(): p for p, t in properties.items() if t == "String"}
    return next((by_lower[k] for k in NAME_KEYS if k in by_lower), None)


def _type_name(types: Any) -> str:
    """The first of Neo4j's type names for a property (``["Long"]`` → ``Long``; arrays keep their ``Array``)."""
    names = [str(t) for t in (types or [])]
    return names[0] if names else "String"


def read_profile(store: GraphStore) -> GraphProfile:
    """Derive the profile of ``store``'s database from its schema procedures and a sample of each relationship
    type's end labels (reads only)."""
    labels = [r["label"] for r in store.read("CALL db.labels() YIELD label RETURN label")]
    counts = {lb: store.read(f"MATCH (n:{quote_identifier(lb)}) RETURN count(n) AS n")[0]["n"] for lb in labels}
    if counts.get(ENTITY) or not any(counts.values()):  # sgr's own shape, or nothing loaded: as they always were
        return entity_shape()
    data = [lb for lb in labels if lb not in BOOKKEEPING_LABELS and counts[lb]]  # a label once used may stay listed
    props: dict[str, dict[str, str]] = {lb: {} for lb in data}
    for row in store.read("CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName, propertyTypes "
                          "RETURN nodeLabels, propertyName, propertyTypes"):
        if row["propertyName"] is None:
            continue
        for lb in row["nodeLabels"] or []:
            if lb in props:
                props[lb].setdefault(row["propertyName"], _type_name(row["propertyTypes"]))
    profile = GraphProfile("property")
    for lb in data:
        profile.labels[lb] = LabelProfile(lb, name_property(props[lb]), props[lb], counts[lb])
    rel_props: dict[str, dict[str, str]] = {}
    for row in store.read("CALL db.schema.relTypeProperties() YIELD relType, propertyName, propertyTypes "
                          "RETURN relType, propertyName, propertyTypes"):
        rtype = re.sub(r"^:`?|`$", "", str(row["relType"])).replace("``", "`")
        rel_props.setdefault(rtype, {})
        if row["propertyName"] is not None:
            rel_props[rtype].setdefault(row["propertyName"], _type_name(row["propertyTypes"]))
    types = [r["t"] for r in store.read("CALL db.relationshipTypes() YIELD relationshipType AS t RETURN t")]
    for t in sorted(t for t in types if t != EVIDENCE_REL and not t.startswith("SGR_")):
        rows = store.read(f"MATCH (a)-[r:{quote_identifier(t)}]->(b) WITH a, b LIMIT $cap "
                          "RETURN DISTINCT labels(a) AS a, labels(b) AS b", {"cap": PATTERN_SAMPLE})
        pairs = {(s, e) for row in rows for s in row["a"] for e in row["b"] if s in profile.labels
                 and e in profile.labels}
        for s, e in sorted(pairs):
            profile.relationships.append(RelationshipProfile(t, s, e, dict(rel_props.get(t, {}))))
    return profile


# -- the editable file -----------------------------------------------------------------------------------------------
def _field(where: str, value: Any, kind: type, name: str) -> Any:
    if not isinstance(value, kind):
        raise InputError(f"{where}: field {name!r} must be a {kind.__name__} (got {value!r})")
    return value


def profile_from_dict(data: Any, where: str = "profile") -> GraphProfile:
    """A profile from its JSON form; a wrong field is an InputError naming ``where`` and the field."""
    _field(where, data, dict, "(top level)")
    unknown = set(data) - {"version", "shape", "labels", "relationships"}
    if unknown:
        raise InputError(f"{where}: unknown field {sorted(unknown)[0]!r} (fields: version, shape, labels, "
                         "relationships)")
    shape = data.get("shape", "property")
    if shape not in SHAPES:
        raise InputError(f"{where}: field 'shape' must be one of {', '.join(SHAPES)} (got {shape!r})")
    profile = GraphProfile(shape, source=where)
    for label, spec in _field(where, data.get("labels", {}), dict, "labels").items():
        _field(where, spec, dict, f"labels.{label}")
        bad = set(spec) - {"name_property", "properties", "count"}
        if bad:
            raise InputError(f"{where}: unknown field 'labels.{label}.{sorted(bad)[0]}'")
        props = {str(k): str(v) for k, v in _field(where, spec.get("properties", {}), dict,
                                                    f"labels.{label}.properties").items()}
        naming = spec.get("name_property")
        if naming is not None and not isinstance(naming, str):
            raise InputError(f"{where}: field 'labels.{label}.name_property' must be a string or null")
        profile.labels[label] = LabelProfile(label, naming, props, int(spec.get("count", 0) or 0))
    for i, spec in enumerate(_field(where, data.get("relationships", []), list, "relationships")):
        _field(where, spec, dict, f"relationships[{i}]")
        missing = [k for k in ("type", "start", "end") if not isinstance(spec.get(k), str)]
        if missing:
            raise InputError(f"{where}: field 'relationships[{i}].{missing[0]}' must be a string")
        for k in ("start", "end"):
            if spec[k] not in profile.labels:
                raise InputError(f"{where}: field 'relationships[{i}].{k}' names label {spec[k]!r}, which 'labels' "
                                 "does not list")
        profile.relationships.append(RelationshipProfile(spec["type"], spec["start"], spec["end"],
                                                         {str(k): str(v) for k, v in
                                                          dict(spec.get("properties") or {}).items()}))
    return profile


def load_profile(path: Path) -> GraphProfile:
    """The profile in the JSON file ``path`` (errors name the file, and the line of a JSON syntax error)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the graph profile: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    return profile_from_dict(data, str(path))


def save_profile(profile: GraphProfile, path: Path) -> Path:
    Path(path).write_text(json.dumps(profile.to_dict(), indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return Path(path)


#: What a derived profile is read from, in one cheap query: labels, relationship types, node and relationship counts.
FINGERPRINT = ("CALL db.labels() YIELD label WITH collect(label) AS labels "
               "CALL db.relationshipTypes() YIELD relationshipType WITH labels, collect(relationshipType) AS types "
               "CALL { MATCH (n) RETURN count(n) AS nodes } CALL { MATCH ()-[r]->() RETURN count(r) AS rels } "
               "RETURN labels, types, nodes, rels")
_DERIVED: "weakref.WeakKeyDictionary[GraphStore, tuple[tuple, GraphProfile]]" = weakref.WeakKeyDictionary()


def schema_fingerprint(store: GraphStore) -> tuple:
    """The labels, relationship types and node and relationship counts of ``store``'s database (a load, a deletion or
    a new label changes it)."""
    row = store.read(FINGERPRINT)[0]
    return tuple(sorted(row["labels"])), tuple(sorted(row["types"])), row["nodes"], row["rels"]


def profile_for(store: GraphStore) -> GraphProfile:
    """The profile sgr uses for ``store``: the file ``SGR_PROFILE`` names, else :func:`read_profile`, read again only
    when :func:`schema_fingerprint` changed since the last read on this store."""
    path = profile_file()
    if path is not None:
        return load_profile(path)
    key = schema_fingerprint(store)
    cached = _DERIVED.get(store)
    if cached is None or cached[0] != key:
        cached = _DERIVED[store] = (key, read_profile(store))
    return cached[1]


# -- full-text indexes on the naming properties (written only with the user's consent) -------------------------------
def name_index(label: str, prop: str) -> str:
    """The name sgr gives the full-text index on ``label.prop``."""
    return "sgr_name_" + re.sub(r"\W+", "_", f"{label}_{prop}").strip("_").lower()


def fulltext_indexes(store: GraphStore) -> dict[tuple[str, str], str]:
    """(label, property) → the name of an online full-text node index on it (the user's own ones count too)."""
    rows = store.read("SHOW FULLTEXT INDEXES YIELD name, entityType, labelsOrTypes, properties, state "
                      "RETURN name, entityType, labelsOrTypes, properties, state")
    out: dict[tuple[str, str], str] = {}
    for r in rows:
        if r["entityType"] != "NODE" or r["state"] != "ONLINE":
            continue
        for lb in r["labelsOrTypes"] or []:
            for p in r["properties"] or []:
                out.setdefault((lb, p), r["name"])
    return out


def create_name_indexes(store: GraphStore, profile: GraphProfile, *, consent: bool) -> list[str]:
    """Create a full-text index on each entity label's naming property that has none; returns the names created.
    Without ``consent`` nothing is written and ConfigError says how to give it."""
    have = fulltext_indexes(store)
    wanted = [(lp.label, lp.name_property) for lp in profile.entity_labels()
              if lp.name_property and (lp.label, lp.name_property) not in have]
    if not wanted:
        return []
    if not consent:
        raise ConfigError("creating full-text indexes on " + ", ".join(f"{lb}.{p}" for lb, p in wanted)
                          + " writes to your database: rerun with --yes to allow it")
    made = []
    for lb, p in wanted:
        name = name_index(lb, p)
        store.write(f"CREATE FULLTEXT INDEX {quote_identifier(name)} IF NOT EXISTS FOR (n:{quote_identifier(lb)}) "
                    f"ON EACH [n.{quote_identifier(p)}]")
        made.append(name)
    store.write("CALL db.awaitIndexes(300)")
    return made
