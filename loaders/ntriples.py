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
from pathlib import Path
from typing import Any

from loaders.records import EntityType, LineReader, Literal, Malformed, Name, Record, Skipped, Triple

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
        res = parse_line(text, keep_all)
        if res is None:
            continue
        if isinstance(res, str):
            yield Malformed(label, n, res)
            continue
        yield res
        if keep_all and type(res) is EntityType:  # the types list and, with --keep-all, the triple
            yield Triple(res.entity, res.relation, res.type)
