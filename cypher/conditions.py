"""C_q as Cypher: the typed conditions of a constrained read query and the Cypher text of each one.

:class:`QueryConstraints` is the small, typed form of the question's constraints that Cypher can act on (built from
SGR's ``Constraint`` list by :func:`sgr.methods.sgr.constraints.query_constraints`). The expressions below are the
ONE place where their meaning is written; :mod:`cypher.compile` puts them in compiled queries and
:mod:`cypher.grammar` offers them, as fixed alternatives, to the model's NL→Cypher decoding.

Where the graph keeps dates (Freebase style): on the CVT nodes of a walk and on the answer node — literal
properties whose key ends in ``from``/``start``/``start_date``/``date`` (a start) or ``to``/``end``/``end_date``
(an end), and the names of neighbours over relationships whose type ends that way (Freebase keeps dates on CVT
siblings). A value counts when it starts with a four-digit year; dates compare as ``YYYY[-MM[-DD]]`` strings.

    type T            the answer's ``types`` (stored at load time) name T; else (T specific) its name has the
                      whole word T (or a word named alike: college ↔ university, :data:`NAME_WORDS`)
    year Y, "in"      a dated node of the walk has a start ≤ Y and no end, or an end ≥ Y
    year Y, "before"  a dated node of the walk starts before Y;   "after": one starts after Y (and none before)
    ordinal           earliest: the answers with the smallest start date of their walks; latest: the largest
                      (a year written in the answer's name stands in when its walks carry no date)
    count             the answer is the number of distinct answers
    second entity     the answer is adjacent (directly or through one CVT) to each other linked entity (a join)
    mention           a CVT node of the walk has a neighbour the question names (a character, a film, a team
                      that entity linking left out)

Where the graph keeps numbers: on the answer node — literal properties whose key names the *measure* (a regex
alternative such as ``area|population``) — and on its neighbours over relationships whose type names it (Freebase
keeps a population as a dated integer on a CVT: that node's numeric properties; a literal neighbour: its name).

    number N, op      the answer has a number of the measure with ``value op N`` (op one of > < >= <=)
    extreme           max: the answers with the largest number of the measure ("largest city"); min: the smallest
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sgr.core.lexicon import DATE_KEY, DATE_VALUE, END_KEY, NAME_WORDS, NOT_A_NUMBER_KEY
from sgr.core.text import cypher_literal

YEAR_OPS = ("in", "before", "after")
ORDINALS = ("earliest", "latest")
NUMBER_OPS = (">", "<", ">=", "<=")
EXTREMES = ("max", "min")
_MEASURE_CHARS = set("abcdefghijklmnopqrstuvwxyz_|")
#: the shortest name a question's mention may match (mention_condition)
MIN_MENTION = 4
#: sentinel sort keys of an undated walk (sort after every date in the ordinal's direction)
UNDATED = {"earliest": "9999", "latest": "0000"}


#: The kind name of C_q's join (the answer meets another linked entity) in :attr:`QueryConstraints.kinds` and traces.
JOIN_KIND = "second entity"


@dataclass(frozen=True)
class QueryConstraints:
    """The conditions one read query applies (module docstring); all None/False: no condition."""

    type_name: str | None = None  # a lower-case word: "university", "person", "location" …
    year: int | None = None
    year_op: str = "in"  # "in" | "before" | "after"
    ordinal: str | None = None  # "earliest" | "latest"
    count: bool = False
    join_ids: tuple[str, ...] = ()  # the other linked entities (the compiler joins on each id …
    second_name: str | None = None  # … the model's grammar on its name)
    mention_text: str | None = None  # the question's words (mention_words): a CVT of the walk touches a node it names
    measure: str | None = None  # what a number measures: key words as regex alternatives, "area|population"
    number: float | None = None  # a numeric comparison: value number_op number
    number_op: str = ">"
    extreme: str | None = None  # a numeric superlative: "max" | "min" of the measure

    def __post_init__(self) -> None:
        if self.year_op not in YEAR_OPS:
            raise ValueError(f"year_op must be one of {YEAR_OPS}, got {self.year_op!r}")
        if self.ordinal is not None and self.ordinal not in ORDINALS:
            raise ValueError(f"ordinal must be one of {ORDINALS}, got {self.ordinal!r}")
        if self.type_name is not None and not self.type_name.isalpha():
            raise ValueError(f"type_name must be one word of letters, got {self.type_name!r}")
        if self.number_op not in NUMBER_OPS:
            raise ValueError(f"number_op must be one of {NUMBER_OPS}, got {self.number_op!r}")
        if self.extreme is not None and self.extreme not in EXTREMES:
            raise ValueError(f"extreme must be one of {EXTREMES}, got {self.extreme!r}")
        if self.measure is not None and (not self.measure or set(self.measure) - _MEASURE_CHARS):
            raise ValueError(f"measure must be lower-case words joined by '|', got {self.measure!r}")
        if (self.number is not None or self.extreme) and not self.measure:
            raise ValueError("a numeric comparison or superlative needs a measure")
        if self.mention_text is not None and self.mention_text != mention_words(self.mention_text):
            raise ValueError(f"mention_text must be written by mention_words, got {self.mention_text!r}")

    @property
    def empty(self) -> bool:
        return not (self.type_name or self.year is not None or self.ordinal or self.count or self.join_ids
                    or self.second_name or self.mention_text or self.number is not None or self.extreme)

    @property
    def kinds(self) -> list[str]:
        """The constraint kinds present, in the order the compiled query applies them."""
        out = [JOIN_KIND] if self.join_ids or self.second_name else []
        out += ["mention"] if self.mention_text else []
        out += ["type"] if self.type_name else []
        out += [("time" if self.year_op == "in" else "comparison")] if self.year is not None else []
        out += ["comparison"] if self.number is not None else []
        out += ["ordinal"] if self.ordinal or self.extreme else []
        return out + (["count"] if self.count else [])


def dates(node: str) -> str:
    """``[[is_end, "YYYY-MM-DD"], …]``: the date facts of ``node`` (module docstring)."""
    return (f"[_p IN [_k IN keys({node}) | [_k, toStringOrNull({node}[_k])]] + "
            f"[({node})-[_r]-(_m) WHERE type(_r) =~ '{DATE_KEY}' | [type(_r), _m.name]] "
            f"WHERE _p[0] =~ '{DATE_KEY}' AND _p[1] =~ '{DATE_VALUE}' | [_p[0] =~ '{END_KEY}', left(_p[1], 10)]]")


def year_condition(year: int, op: str, nodes: str) -> str:
    """True when a node of the list ``nodes`` has dates satisfying ``op`` ``year`` (module docstring)."""
    y = cypher_literal(f"{year:04d}")
    if op == "in":
        test = (f"any(_d IN _D WHERE NOT _d[0] AND left(_d[1], 4) <= {y}) AND "
                f"(none(_d IN _D WHERE _d[0]) OR any(_d IN _D WHERE _d[0] AND left(_d[1], 4) >= {y}))")
    elif op == "before":
        test = f"any(_d IN _D WHERE NOT _d[0] AND left(_d[1], 4) < {y})"
    elif op == "after":
        test = (f"any(_d IN _D WHERE NOT _d[0]) AND "
                f"all(_d IN _D WHERE _d[0] OR left(_d[1], 4) > {y})")
    else:
        raise ValueError(f"year_op must be one of {YEAR_OPS}, got {op!r}")
    return f"any(_n IN {nodes} WHERE any(_D IN [{dates('_n')}] WHERE {test}))"


def date_key(ordinal: str, nodes: str) -> str:
    """The sort key of a walk for ``ordinal``: its earliest (or latest) start date, :data:`UNDATED` when none."""
    if ordinal not in ORDINALS:
        raise ValueError(f"ordinal must be one of {ORDINALS}, got {ordinal!r}")
    cmp = "<" if ordinal == "earliest" else ">"
    return (f"reduce(_a = {cypher_literal(UNDATED[ordinal])}, _n IN {nodes} | reduce(_b = _a, _d IN {dates('_n')} | "
            f"CASE WHEN NOT _d[0] AND _d[1] {cmp} _b THEN _d[1] ELSE _b END))")


def name_year(answer: str) -> str:
    """The first word of the answer's name that is a four-digit year (null when none)."""
    return f"head([_w IN split({answer}.name, ' ') WHERE _w =~ '[12][0-9]{{3}}'])"


def type_condition(type_name: str, answer: str) -> str:
    """The answer's stored ``types`` contain ``type_name``."""
    return f"any(_t IN coalesce({answer}.types, []) WHERE toLower(_t) CONTAINS {cypher_literal(type_name)})"


def name_condition(type_name: str, answer: str) -> str:
    """The answer's name has the whole word ``type_name`` ("university" in "Ohio State University") or a word named
    alike for it (:data:`NAME_WORDS`: a college question accepts "University of Zurich"); a longer word does not
    count ("states" in "United States of America" is no state)."""
    pattern = r"(?s).*\b(" + "|".join(NAME_WORDS.get(type_name, (type_name,))) + r")\b.*"
    return f"toLower(coalesce({answer}.name, '')) =~ {cypher_literal(pattern)}"


def mention_words(text: str) -> str:
    """``text`` as :func:`mention_condition` reads it: lower case, every run of other characters than letters and
    digits one space, a space at each end (``"who plays timon's voice?"`` → ``" who plays timon s voice "``)."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


def mention_condition(nodes: str, walk: str) -> str:
    """A CVT node of the list ``nodes`` has a neighbour outside the list ``walk`` whose whole name (of at least
    :data:`MIN_MENTION` characters) the question names (``$mention``, :func:`mention_words`): "who plays Timon's
    voice in The Lion King" keeps the Lion King performance whose character is Timon."""
    name = "replace(toLower(_m.name), \"'\", ' ')"
    return (f"any(_c IN {nodes} WHERE _c:CVT AND EXISTS {{ MATCH (_c)--(_m:Entity) WHERE NOT _m IN {walk} "
            f"AND size(_m.name) >= {MIN_MENTION} AND $mention CONTAINS (' ' + {name} + ' ') }})")


def adjacent_condition(answer: str, second: str) -> str:
    """The answer (an expression) is adjacent to the node pattern ``second``, directly or through one CVT node."""
    return (f"any(_x IN [{answer}] WHERE EXISTS {{ (_x)--({second}) }} OR EXISTS {{ (_x)--(:CVT)--({second}) }})")


def numbers(node: str, measure: str) -> str:
    """The numbers of ``measure`` that the node variable ``node`` carries (module docstring), as a list expression."""
    m = cypher_literal(f"(?i)(.*[._])?({measure})([._].*)?")
    own = (f"[_k IN keys({node}) WHERE _k =~ {m} AND toFloatOrNull(toString({node}[_k])) IS NOT NULL "
           f"| toFloat(toString({node}[_k]))]")
    near = (f"[({node})-[_r]-(_m) WHERE type(_r) =~ {m} | coalesce(toFloatOrNull(toString(_m.name)), "
            f"head([_k IN keys(_m) WHERE NOT _k =~ '{NOT_A_NUMBER_KEY}' "
            f"AND toFloatOrNull(toString(_m[_k])) IS NOT NULL | toFloat(toString(_m[_k]))]))]")
    return f"[_v IN {own} + {near} WHERE _v IS NOT NULL]"


def has_dates(nodes: str) -> str:
    """True when a node of the list ``nodes`` carries a date fact (:func:`dates`): a time, comparison or ordinal
    condition has something to decide by."""
    return f"any(_n IN {nodes} WHERE size({dates('_n')}) > 0)"


def has_numbers(measure: str, node: str) -> str:
    """True when ``node`` carries a number of ``measure`` (:func:`numbers`)."""
    return f"size({numbers(node, measure)}) > 0"


def number_condition(value: float, op: str, measure: str, node: str) -> str:
    """True when ``node`` has a number of ``measure`` with ``number op value``."""
    if op not in NUMBER_OPS:
        raise ValueError(f"number_op must be one of {NUMBER_OPS}, got {op!r}")
    return f"any(_y IN [{node}] WHERE any(_v IN {numbers('_y', measure)} WHERE _v {op} {format(float(value), 'f')}))"


def number_key(extreme: str, measure: str, node: str) -> str:
    """The sort key of ``node`` for a numeric superlative: its largest (max) or smallest (min) number of ``measure``,
    null when it has none."""
    if extreme not in EXTREMES:
        raise ValueError(f"extreme must be one of {EXTREMES}, got {extreme!r}")
    cmp = ">" if extreme == "max" else "<"
    return (f"head([_y IN [{node}] | reduce(_b = null, _v IN {numbers('_y', measure)} | "
            f"CASE WHEN _b IS NULL OR _v {cmp} _b THEN _v ELSE _b END)])")
