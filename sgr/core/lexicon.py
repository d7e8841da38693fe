"""Every English cue word and every Freebase-specific rule sgr reads questions and graphs by, in one place.

The rest of the package imports these lists and patterns; none spells its own. Each entry says what it is for and
on which **dev** data it was checked (CWQ dev ``cwq_dev.jsonl``, MetaQA ``*_dev``, WebQSP train paths): rules are
chosen and kept on dev data only, and WebQSP test / MetaQA test are report-only. ``bench/lexicon.py`` measures each
rule's effect on CWQ dev (every answer with the rule against every answer without it) and writes
``bench/results/lexicon.json``; a rule that does not hold up there is dropped, not kept for a test set's sake.

Sections: question words (stop words, wh-words, the answer-type pattern), constraint cues (time, ordinal,
superlative, comparison, number, count), linking cues, and the Freebase schema (date keys, measure keys, noise
relations, generic types).
"""

from __future__ import annotations

import re

# ----------------------------------------------------------------------------------------------------------------------
# Question words
# ----------------------------------------------------------------------------------------------------------------------
#: Words that never start or end an entity mention (:func:`sgr.retrieval.entities.spans`); besides function words,
#: the generic nouns of MetaQA and WebQSP questions that name what is asked, not what it is about.
#: Checked on: MetaQA dev (1–3 hop) and CWQ dev topic linking (``bench/linking.py``).
STOPWORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "is", "was", "are",
    "were", "be", "been", "do", "does", "did", "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
    "that", "this", "these", "those", "it", "its", "his", "her", "their", "they", "he", "she", "we", "you", "i",
    "me", "my", "has", "have", "had", "as", "about", "into", "than", "then", "there", "many", "much", "name",
    "names", "people", "person", "movie", "movies", "film", "films", "also", "can", "will", "would", "play", "plays",
    "played", "s", "'s", "type", "kind", "year", "years", "language", "languages", "genre", "genres",
})

#: Word-overlap baselines' stop words (:mod:`sgr.methods.baselines`): function words plus the four nouns that are in
#: nearly every MetaQA question and Freebase relation name and so carry no signal. Checked on: MetaQA dev.
OVERLAP_STOPWORDS = frozenset("""a an the of in on at to for by from with and or is are was were be been being do does
did what which who whom whose where when why how that this these those it its as has have had also
movie movies film films person people""".split())

#: "who/whom/whose" asks for a person, "where" for a place, "when/what year" for a time (C_q's type).
WHO = re.compile(r"^\s*(who|whom|whose)\b", re.I)
WHERE = re.compile(r"^\s*where\b", re.I)
WHEN = re.compile(r"^\s*when\b|\bwhat year\b|\bwhich year\b|\bwhat date\b", re.I)
#: "what/which (kind of) T": T is the answer's type word.
TYPE = re.compile(r"\b(?:what|which)\s+(kind of |type of |sort of )?([a-z]+(?: [a-z]+)?)\b", re.I)
#: Words after "what/which" that are not a type ("what is …", "which of …").
TYPE_STOP = frozenset({"is", "was", "are", "were", "does", "did", "do", "the", "a", "an", "has", "have", "had", "can",
                       "will", "would", "should", "kind", "type", "sort", "of"})
#: The question's generic type words → the word stored ``types`` carry (``who`` → person, ``where`` → location).
GENERIC = {"person": "person", "place": "location"}
#: Type words too general for the name test (they act through stored ``types`` only).
GENERIC_TYPES = frozenset({"person", "location"})
#: Type words whose instances are named with either word (a college question accepts "University of Zurich").
#: Checked on: CWQ dev (``bench/lexicon.py``, rule ``name_words``).
NAME_WORDS = {"college": ("college", "university"), "university": ("university", "college")}

# ----------------------------------------------------------------------------------------------------------------------
# Constraint cues (C_q)
# ----------------------------------------------------------------------------------------------------------------------
#: A four-digit year in a question.
YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
#: Ordinal words that ask for the earliest start date of the answers' walks.
EARLIEST = frozenset({"first", "earliest", "oldest"})
#: Ordinal words that ask for the latest; ``now``/``today``/``current``/``currently``/``recent`` included
#: (checked on: CWQ dev, rule ``latest_now``).
LATEST = frozenset({"last", "latest", "most recent", "newest", "recent", "current", "currently", "now", "today",
                    "youngest"})
#: Comparison words on a year: before/until Y, after/since Y.
BEFORE = frozenset({"before", "until"})
AFTER = frozenset({"after", "since"})
_SIZE = "area|population"
#: Numeric superlatives → (extreme, measure: regex alternatives of the number's key words).
SUPERLATIVES = {"largest": ("max", _SIZE), "biggest": ("max", _SIZE), "smallest": ("min", _SIZE),
                "tallest": ("max", "height"), "highest": ("max", "height|elevation"),
                "lowest": ("min", "height|elevation"), "longest": ("max", "length"), "shortest": ("min", "height|length"),
                "deepest": ("max", "depth"), "richest": ("max", "net_worth"),
                "most populous": ("max", "population"), "most populated": ("max", "population"),
                "least populous": ("min", "population"), "least populated": ("min", "population")}
POPULOUS = re.compile(r"\b(most|least) (populous|populated)\b", re.I)
#: The ordinal and superlative words the schema rule finds: those the translation acts on plus most/least/best/worst
#: (longest first, so "most recent" is found before "most").
ORDINAL_WORDS = sorted(EARLIEST | LATEST | {w for w in SUPERLATIVES if " " not in w}
                       | {"most", "least", "best", "worst"}, key=lambda w: (-len(w), w))
ORDINAL = re.compile(r"\b(" + "|".join(map(re.escape, ORDINAL_WORDS)) + r"|\d+(?:st|nd|rd|th))\b", re.I)
#: The ordinal values the model's schema grammar may write (``constraint: ordinal = …``).
GRAMMAR_ORDINALS = ("first", "last", "earliest", "latest", "largest", "smallest", "oldest", "youngest")
#: Comparison cue words (C_q kind ``comparison``).
COMPARISON = re.compile(r"\b(more than|less than|fewer than|greater than|larger than|smaller than|older than|"
                        r"younger than|before|after|since|until|over|under|at least|at most)\b", re.I)
#: Count cues (C_q kind ``count``).
COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.I)
HOW_MANY = re.compile(r"\bhow many ([a-z]+)", re.I)
_LENGTHS = "height|elevation|length"
#: The word after a compared number → what it measures ("more than 5 million people" → population).
UNITS = {"people": "population", "inhabitants": "population", "residents": "population", "population": "population",
         "feet": _LENGTHS, "ft": _LENGTHS, "meters": _LENGTHS, "metres": _LENGTHS, "miles": "length|area",
         "km": "length|area", "kilometers": "length|area", "dollars": "net_worth|revenue|budget|gross",
         "tall": "height", "high": "height|elevation", "long": "length"}
SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
NUMBER_OPS = {"more than": ">", "over": ">", "greater than": ">", "larger than": ">", "bigger than": ">",
              "above": ">", "at least": ">=", "less than": "<", "fewer than": "<", "under": "<", "below": "<",
              "smaller than": "<", "at most": "<="}
NUMBER = re.compile(r"\b(" + "|".join(NUMBER_OPS) + r")\s+\$?([0-9][0-9,]*(?:\.[0-9]+)?)\s*"
                    r"(thousand|million|billion)?\s*([a-z]+)?", re.I)
#: The word after "how many" when the question asks for a quantity the graph states (a duration, a frequency, a
#: measure), not for the number of its answers. Checked on: CWQ dev (rule ``quantities``).
QUANTITIES = frozenset({"years", "months", "weeks", "days", "hours", "minutes", "seconds", "times", *UNITS})

# ----------------------------------------------------------------------------------------------------------------------
# Freebase schema
# ----------------------------------------------------------------------------------------------------------------------
#: Keys (literal properties or relationship types) that hold a date: a start, or an end.
DATE_KEY = "(?i)(.*[._])?(from|to|start|end|start_date|end_date|date)$"
END_KEY = "(?i)(.*[._])?(to|end|end_date)$"
DATE_VALUE = "[12][0-9]{3}.*"
#: Keys of a number-holding node that are not its number (dates, the year of a dated integer, the id).
NOT_A_NUMBER_KEY = "(?i)(.*[._])?(from|to|start|end|start_date|end_date|date|year|id)$"
#: Relations RoG's shortest paths pass through that say nothing about the question (hubs shared by millions): left out
#: of tuning targets. Checked on: WebQSP train paths and CWQ dev paths.
NOISE_RELATIONS = frozenset({
    "people.person.gender", "common.topic.notable_types", "common.topic.notable_for", "type.object.type",
    "kg.object_profile.prominent_type", "common.topic.webpage", "common.webpage.category",
})
#: Relation name prefixes of Freebase's bookkeeping (``freebase.valuenotation.is_reviewed``, ``common.topic.image``,
#: ``type.object.type`` …): a walk that writes training questions from the graph never takes them
#: (:mod:`sgr.retrieval.graph_questions`). Checked on: walks over the WebQSP slice + CWQ dev graph.
BOOKKEEPING_PREFIXES = ("freebase.", "common.", "type.", "kg.", "user.", "dataworld.")
