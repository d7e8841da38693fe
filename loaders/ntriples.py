"""Freebase RDF as N-Triples (``.nt`` / ``.nt.gz``): ``<subject> <predicate> <object> .``

Mapping to the graph model (W3C RDF 1.1 N-Triples grammar, restricted to what Freebase dumps use):

* IRIs in the Freebase namespace ``http://rdf.freebase.com/ns/`` lose the prefix: subjects and
  objects become entity ids (MIDs such as ``m.03_r3``), predicates become relation names
  (``location.country.languages_spoken``). The W3C ``rdf:``/``rdfs:``/``owl:``/``xsd:`` namespaces
  are shortened to those prefixes; any other IRI is kept whole. Blank nodes keep their ``_:`` label.
* ``type.object.name`` with an English (``@en``, ``@en-…``) or untagged literal → the entity's
  ``name``; names in other languages are skipped (and counted).
* Any other literal → a property named by the predicate, ``"…"^^xsd:integer``/``int``/``long`` →
  int, ``float``/``double``/``decimal`` → float, ``boolean`` → bool, anything else (dates, strings)
  → the unescaped lexical form; literals tagged with a language other than English are skipped.
* An IRI object → a :class:`~loaders.records.Triple`.
* ``type.object.type`` and ``common.topic.notable_types`` with an IRI object → an
  :class:`~loaders.records.EntityType` (the entity's ``types`` list property), and with
  ``keep_all`` also the triple.
* Housekeeping relations are skipped unless ``keep_all``: the Freebase schema domain ``type.*``
  (``type.object.type``, ``type.type.instance``, ``type.object.key`` …, but not
  ``type.object.name``), ``common.*``, ``freebase.*``, ``kg.*`` and the W3C rdf/rdfs/owl
  vocabulary. Each skipped line is reported as :class:`~loaders.records.Skipped` with its relation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loaders.records import EntityType, LineReader, Literal, Malformed, Name, Record, Skipped, Triple, line_array

FORMAT = "ntriples"
FREEBASE_NS = "http://rdf.freebase.com/ns/"
NAME_RELATION = "type.object.name"
#: Relations whose objects are stored in the subject's ``types`` list property.
TYPE_RELATIONS = frozenset({"type.object.type", "common.topic.notable_types"})
W3C_PREFIXES = {
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#": "rdf:",
    "http://www.w3.org/2000/01/rdf-schema#": "rdfs:",
    "http://www.w3.org/2002/07/owl#": "owl:",
    "http://www.w3.org/2001/XMLSchema#": "xsd:",
}
#: Relation-name prefixes skipped by default (``--keep-all`` keeps them).
HOUSEKEEPING_PREFIXES = ("type.", "common.", "freebase.", "kg.", "rdf:", "rdfs:", "owl:")
INT_TYPES = {"xsd:integer", "xsd:int", "xsd:long", "xsd:short", "xsd:byte", "xsd:nonNegativeInteger",
             "xsd:positiveInteger", "xsd:negativeInteger", "xsd:nonPositiveInteger", "xsd:unsignedInt",
             "xsd:unsignedLong", "xsd:unsignedShort", "xsd:gYear"}
FLOAT_TYPES = {"xsd:float", "xsd:double", "xsd:decimal"}

_IRI = r"<([^<>\"{}|^`\\\s]*)>"
_BNODE = r"(_:[A-Za-z0-9_][A-Za-z0-9_.\-]*)"
_LITERAL = r"\"((?:[^\"\\\n\r]|\\.)*)\"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^" + _IRI + r")?"
_LINE = re.compile(rf"^\s*(?:{_IRI}|{_BNODE})\s+{_IRI}\s+(?:{_IRI}|{_BNODE}|{_LITERAL})\s*\.\s*(?:#.*)?$")
#: The common Freebase line, three namespace IRIs of word characters and dots: read without the full grammar.
_FAST_TRIPLE = re.compile(r"<http://rdf\.freebase\.com/ns/([\w.]+)> <http://rdf\.freebase\.com/ns/([\w.]+)> "
                          r"<http://rdf\.freebase\.com/ns/([\w.]+)> \.")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def shorten(iri: str) -> str:
    """Entity id / relation name of an IRI (see module doc)."""
    if iri.startswith(FREEBASE_NS):
        return iri[len(FREEBASE_NS):]
    for ns, prefix in W3C_PREFIXES.items():
        if iri.startswith(ns):
            return prefix + iri[len(ns):]
    return iri


def is_housekeeping(relation: str) -> bool:
    """True for the schema/bookkeeping relations skipped by default (``type.object.name`` is data)."""
    return relation != NAME_RELATION and relation.startswith(HOUSEKEEPING_PREFIXES)


def unescape(lexical: str) -> str:
    """Undo N-Triples string escapes (``\\"``, ``\\n``, ``\\uXXXX``, ``\\UXXXXXXXX`` …)."""
    if "\\" not in lexical:
        return lexical

    def repl(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        return _SIMPLE_ESCAPES.get(m.group(3), m.group(3))

    return _ESCAPE.sub(repl, lexical)


def literal_value(lexical: str, datatype: str | None) -> Any:
    """The Python value of a typed literal (ints, floats, booleans; else the string)."""
    text = unescape(lexical)
    if datatype is None:
        return text
    dt = shorten(datatype)
    try:
        if dt in INT_TYPES:
            return int(text)
        if dt in FLOAT_TYPES:
            return float(text)
    except ValueError:
        return text
    if dt == "xsd:boolean":
        return text.strip().lower() in ("true", "1")
    return text


def is_english(lang: str | None) -> bool:
    return lang is None or lang.lower() == "en" or lang.lower().startswith("en-")


def parse_line(text: str, keep_all: bool = False) -> Record | str | None:
    """One record, a reason string for a malformed line, or None for a blank/comment line."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    m = _LINE.match(text)
    if m is None:
        if not stripped.endswith("."):
            return "not an N-Triples statement (missing the final ' .')"
        if not stripped.startswith(("<", "_:")):
            return "not an N-Triples statement (the subject must be <IRI> or _:blank)"
        return "not an N-Triples statement (expected <subject> <predicate> <object> .)"
    s_iri, s_bnode, p_iri, o_iri, o_bnode, lexical, lang, datatype = m.groups()
    subject = shorten(s_iri) if s_iri is not None else s_bnode
    relation = shorten(p_iri)
    if not subject:
        return "empty subject IRI"
    if not relation:
        return "empty predicate IRI"
    if relation in TYPE_RELATIONS and lexical is None:
        obj = shorten(o_iri) if o_iri is not None else o_bnode
        if not obj:
            return "empty object IRI"
        return EntityType(subject, obj, relation)
    if not keep_all and is_housekeeping(relation):
        return Skipped(relation, "housekeeping relation")
    if lexical is not None:  # literal object
        if relation == NAME_RELATION:
            if not is_english(lang):
                return Skipped(f"{NAME_RELATION}@{lang}", "name not in English")
            name = unescape(lexical).strip()
            return Name(subject, name) if name else "empty name literal"
        if lang is not None and not is_english(lang):
            return Skipped(f"{relation}@{lang}", "literal not in English")
        return Literal(subject, relation, literal_value(lexical, datatype))
    obj = shorten(o_iri) if o_iri is not None else o_bnode
    if not obj:
        return "empty object IRI"
    return Triple(subject, relation, obj)


def line_records(text: str, n: int, label: str, keep_all: bool = False) -> tuple[Record, ...]:
    """The records of line ``n`` (none for a blank or comment line; an :class:`EntityType` line with
    ``keep_all`` gives its triple too)."""
    res = parse_line(text, keep_all)
    if res is None:
        return ()
    if isinstance(res, str):
        return (Malformed(label, n, res),)
    if keep_all and type(res) is EntityType:  # the types list and, with --keep-all, the triple
        return res, Triple(res.entity, res.relation, res.type)
    return (res,)


def parse(path: Path, keep_all: bool = False, reader: LineReader | None = None) -> Iterator[Record]:
    """Yield the records of an N-Triples file (see module doc)."""
    reader = reader or LineReader(path)
    label = reader.label
    fast = _FAST_TRIPLE.fullmatch
    for n, text in reader:
        if isinstance(text, Malformed):
            yield text
            continue
        m = fast(text)
        if m is not None:  # the common shape: an edge, unless a type or housekeeping relation (parse_line's job)
            subject, relation, obj = m.groups()
            if relation not in TYPE_RELATIONS and (keep_all or not relation.startswith(HOUSEKEEPING_PREFIXES)):
                yield Triple(subject, relation, obj)
                continue
        yield from line_records(text, n, label, keep_all)


# -- blocks of lines at once -----------------------------------------------------------------
#: The common Freebase lines, as RE2 patterns for pyarrow's kernels: three namespace IRIs of ASCII word
#: characters and dots, and an English name whose ends are printable ASCII other than a quote or backslash and
#: which holds no quote, backslash or control character (its JSON form is then the text in quotes, and
#: ``strip()`` and the unescaping leave it as it is). Anything else is read line by line (:func:`line_records`).
_BLOCK_TRIPLE = (r"^<http://rdf\.freebase\.com/ns/(?P<s>[\w.]+)> <http://rdf\.freebase\.com/ns/(?P<p>[\w.]+)> "
                 r"<http://rdf\.freebase\.com/ns/(?P<o>[\w.]+)> \.\n$")
_BLOCK_NAME = (r'^<http://rdf\.freebase\.com/ns/(?P<s>[\w.]+)> <http://rdf\.freebase\.com/ns/type\.object\.name> '
               r'"(?P<n>[!#-\[\]-~](?:[^"\\\x00-\x1f]*[!#-\[\]-~])?)"@en \.\n$')
#: Each line is matched with its line break (hence ``\\n$``). Lines longer than this are read line by line (so no
#: field of a line read in a block passes a stated maximum).
BLOCK_LINE_MAX_BYTES = 1000


@dataclass
class Block:
    """One block of lines (:meth:`LineReader.blocks`) parsed at once: the common lines as pyarrow columns, in
    input order within each kind, and the others as ``(line number, text)`` for :func:`line_records`."""

    edges: tuple[Any, Any, Any]  # (relation, head, tail) of its triples
    names: tuple[Any, Any, Any]  # (line number, entity, name as JSON) of its English names
    types: tuple[Any, Any, Any, Any]  # (line number, entity, type, relation) of its entity types
    skipped: dict[str, int]  # housekeeping relations left out, with their counts
    rest: list[tuple[int, str]]

    def name_records(self) -> list[tuple[int, Record]]:
        lines, ids, names = (c.to_pylist() for c in self.names)
        return [(n, Name(e, text[1:-1])) for n, e, text in zip(lines, ids, names)]

    def type_records(self) -> list[tuple[int, Record]]:
        lines, ids, types, relations = (c.to_pylist() for c in self.types)
        return [(n, EntityType(e, t, r)) for n, e, t, r in zip(lines, ids, types, relations)]


def parse_block(raw: bytes, first: int, keep_all: bool = False) -> Block:
    """The lines of ``raw`` (valid UTF-8, whole lines, line ``first`` onwards) as a :class:`Block`, with the same
    records as :func:`parse` gives them line by line."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    lines = line_array(raw)  # each with its "\n"
    numbers = pa.array(np.arange(first, first + len(lines), dtype=np.int64))
    short = pc.less_equal(pc.binary_length(lines), BLOCK_LINE_MAX_BYTES + 1)
    m = pc.extract_regex(lines, _BLOCK_TRIPLE)
    iri = pc.and_(m.is_valid(), short)
    rel = m.field("p")
    is_type = pc.fill_null(pc.and_kleene(iri, pc.is_in(rel, pa.array(sorted(TYPE_RELATIONS)))), False)
    edge = iri if keep_all else pc.and_not(iri, is_type)
    housekeeping = None
    if not keep_all:  # left out: type.* (but names), common.* … (is_housekeeping)
        hits = pc.starts_with(rel, HOUSEKEEPING_PREFIXES[0])
        for prefix in HOUSEKEEPING_PREFIXES[1:]:
            hits = pc.or_(hits, pc.starts_with(rel, prefix))
        housekeeping = pc.fill_null(pc.and_kleene(pc.and_kleene(edge, hits), pc.not_equal(rel, NAME_RELATION)), False)
        edge = pc.and_not(edge, housekeeping)
    edges, types = m.filter(edge), m.filter(is_type)
    other = pc.invert(iri)
    candidates, candidate_numbers = lines.filter(other), numbers.filter(other)
    n = pc.extract_regex(candidates, _BLOCK_NAME)
    named = pc.and_(n.is_valid(), short.filter(other))
    names = n.filter(named)
    rest_at = pc.indices_nonzero(pc.invert(named))
    rest = [(k, text.rstrip("\r\n")) for k, text in zip(candidate_numbers.take(rest_at).to_pylist(),
                                                        candidates.take(rest_at).to_pylist())]
    skipped = pc.value_counts(rel.filter(housekeeping)).to_pylist() if housekeeping is not None else []
    return Block(edges=(edges.field("p"), edges.field("s"), edges.field("o")),
                 names=(candidate_numbers.filter(named), names.field("s"),
                        pc.binary_join_element_wise('"', names.field("n"), '"', "")),
                 types=(numbers.filter(is_type), types.field("s"), types.field("o"), types.field("p")),
                 skipped={v["values"]: v["counts"] for v in skipped}, rest=rest)
