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

#: Short names a question writes for a node named at length (compared with dots removed and case kept, so the pronoun
#: "us" is not the country, unless written "the us"): extra names for topic linking
#: (:func:`sgr.retrieval.mentions.mention_candidates`). Checked on: CWQ dev ("Which USA timezone …", "the 18th US
#: president", "spoken in Britain": 13 questions whose topic is the United States or the United Kingdom and whose
#: text names it only so) and WebQSP train ("what is the political system of the us").
NAME_ALIASES = {"US": "United States of America", "USA": "United States of America", "usa": "United States of America",
                "UK": "United Kingdom", "uk": "United Kingdom", "Britain": "United Kingdom",
                "britain": "United Kingdom", "Great Britain": "United Kingdom"}

#: Demonyms, lower case → the place's name, mostly ones a near spelling does not reach ("British" is not close to
#: *United Kingdom*; "Ethiopian" is close enough to *Ethiopia* and is not listed; "Canadian" and "Icelandic" are, and
#: are listed too): an extra whole-name candidate for the span (method ``demonym``), beside what the word names
#: itself ("Portuguese" → *Portuguese Language*); the fitted scorer weighs the two. Checked on: CWQ dev (each word
#: below occurs there or in WebQSP train questions; the place is the gold topic for "British" 3 times, "Roman(s)" 4,
#: "French" 1, "Canadian" 1; the language for "Portuguese" 53 times) and WebQSP train ("what language did ancient
#: romans write in" → *Roman Empire*).
DEMONYMS = {"british": "United Kingdom", "english": "England", "scottish": "Scotland", "welsh": "Wales",
            "irish": "Ireland", "french": "France", "spanish": "Spain", "portuguese": "Portugal",
            "dutch": "Netherlands", "danish": "Denmark", "swedish": "Sweden", "greek": "Greece", "turkish": "Turkey",
            "chinese": "China", "japanese": "Japan", "thai": "Thailand", "roman": "Roman Empire",
            "romans": "Roman Empire", "canadian": "Canada", "american": "United States of America",
            "americans": "United States of America", "peruvian": "Peru", "egyptian": "Egypt",
            "hungarian": "Hungary", "italian": "Italy", "icelandic": "Iceland", "czech": "Czech Republic"}

#: Word-overlap baselines' stop words (:mod:`sgr.methods.baselines`): function words plus the four nouns that are in
#: nearly every MetaQA question and Freebase relation name and so carry no signal. Checked on: MetaQA dev.
OVERLAP_STOPWORDS = frozenset("""a an the of in on at to for by from with and or is are was were be been being do does
did what which who whom whose where when why how that this these those it its as has have had also
movie movies film films person people""".split())

#: Function words alone (the nouns of OVERLAP_STOPWORDS may name a label): question words never aligned to a key of
#: the graph's profile (:mod:`sgr.retrieval.keys`). Checked on: the movies dev questions and MetaQA dev of
#: ``bench/anygraph.py``.
FUNCTION_WORDS = OVERLAP_STOPWORDS - {"movie", "movies", "film", "films", "person", "people"}

#: "who/whom/whose" asks for a person, "where" for a place, "when/what year" for a time (C_q's type).
WHO = re.compile(r"^\s*(who|whom|whose)\b", re.I)
WHERE = re.compile(r"^\s*where\b", re.I)
WHEN = re.compile(r"^\s*when\b|\bwhat year\b|\bwhich year\b|\bwhat date\b", re.I)
#: "what/which (kind of) T": T is the answer's type word.
TYPE = re.compile(r"\b(?:what|which)\s+(kind of |type of |sort of )?([a-z]+(?: [a-z]+)?)\b", re.I)
#: Words after "what/which" that are not a type ("what is …", "which of …").
TYPE_STOP = frozenset({"is", "was", "are", "were", "does", "did", "do", "the", "a", "an", "has", "have", "had", "can",
                       "will", "would", "should", "kind", "type", "sort", "of"})
#: A noun phrase that describes an entity the question does not name ("where did *the author* that published X grow
#: up?"): composition's bridge, which the answer lies beyond — unless it is what the question asks for (ASKED).
#: Checked on: CWQ dev (the path ranker's ``described_end`` term, ``bench/path_ranker.py``).
DESCRIBED = re.compile(r"\bthe ([a-z]+)(?: [a-z]+)? (?:who|that|which|whose|whom|of|where|in which|with)\b", re.I)
#: The noun a question asks for right after its wh-word and copula ("who is the author of …", "what was the capital
#: of …"): there the described noun is the answer's kind, not a bridge.
ASKED = re.compile(r"^\s*(?:who|what|which)(?:'s| is| was| are| were)? (?:the |a |an )?([a-z]+)", re.I)


def singular(word: str) -> str:
    """A crude singular for matching nouns (cities → city, films → film; short words as they are)."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def asked_noun(question: str) -> str | None:
    """The (singular) noun :data:`ASKED` reads as what the question asks for, or None."""
    asked = ASKED.match(question)
    return singular(asked.group(1)) if asked else None


def described_nouns(question: str) -> set[str]:
    """The (singular) head nouns :data:`DESCRIBED` finds, minus the one :data:`ASKED` asks for."""
    return {singular(m.group(1)) for m in DESCRIBED.finditer(question)} - {asked_noun(question)}


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
#: and greatest/fewest, which rank by a quantity the question names and which sgr reports unchecked when no condition
#: can rank by it (checked on: CWQ dev, "the greatest occupancy capacity", "the fewest postgraduates"); longest
#: first, so "most recent" is found before "most".
ORDINAL_WORDS = sorted(EARLIEST | LATEST | {w for w in SUPERLATIVES if " " not in w}
                       | {"most", "least", "best", "worst", "greatest", "fewest"}, key=lambda w: (-len(w), w))
ORDINAL = re.compile(r"\b(" + "|".join(map(re.escape, ORDINAL_WORDS)) + r"|\d+(?:st|nd|rd|th))\b", re.I)
#: The ordinal values the model's schema grammar may write (``constraint: ordinal = …``).
GRAMMAR_ORDINALS = ("first", "last", "earliest", "latest", "largest", "smallest", "oldest", "youngest")
#: Comparison cue words (C_q kind ``comparison``).
COMPARISON = re.compile(r"\b(more than|less than|fewer than|greater than|larger than|smaller than|older than|"
                        r"younger than|before|after|since|until|over|under|at least|at most)\b", re.I)
#: Count cues (C_q kind ``count``).
COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.I)
#: "the largest/fewest number of X" and "the number of smallest X" rank answers by a quantity: a superlative, not a
#: count of the answers (CWQ dev: "which school … has the largest number of undergraduates?" answered "1", "… the
#: university that has number of smallest postgraduates?" answered "2").
_RANKING = r"(largest|smallest|highest|lowest|greatest|biggest|fewest|most|least|maximum|minimum)"
RANKED_NUMBER = re.compile(rf"\b{_RANKING}\s+number\s+of\b|\bnumber\s+of\s+(?:the\s+)?{_RANKING}\b", re.I)
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
#: A number the question states ("a surface area of 46.3", "an ISO numeric greater than 132") outside entity names
#: and years: a literal the answer must match, which sgr reports as unchecked when no condition can test it.
NUMBER_LITERAL = re.compile(r"(?<![\w.,-])-?\d+(?:,\d{3})*(?:\.\d+)?(?!\w)(?!\.\d)")

# ----------------------------------------------------------------------------------------------------------------------
# Property graphs (a user's own labels and properties, :mod:`sgr.graph.profile`)
# ----------------------------------------------------------------------------------------------------------------------
#: Property keys that name a node, in order of preference (compared lower-case). Checked on: Neo4j's movie graph
#: (``Person.name``, ``Movie.title``) and the MetaQA KB as a property graph (``bench/data/movies_dev.jsonl``).
NAME_KEYS = ("name", "title", "full_name", "fullname", "display_name", "displayname", "label", "username")
#: Words that name one relationship or property by other words (a key whose readable text has a word of a group is
#: named by every word of the group: ``ACTED_IN`` reads "acted in", MetaQA's ``STARRED_ACTORS`` "starred actors").
#: Checked on: bench/data/movies_dev.jsonl and MetaQA dev (``1hop_dev.tsv``, the first 200 questions); "script",
#: "screenplay", "creator": MetaQA dev ("who is the creator of the film script for X", "wrote the screenplay for X").
KEY_SYNONYMS = (
    frozenset({"acted", "act", "acts", "actor", "actors", "starred", "star", "stars", "starring", "cast", "appeared",
               "appear", "appears", "played", "play", "plays", "co-star", "co-stars", "costar", "costars"}),
    frozenset({"released", "release", "releases", "come out", "came out", "premiered"}),
    frozenset({"wrote", "write", "writes", "written", "writer", "writers", "screenwriter", "screenwriters",
               "scriptwriter", "scriptwriters", "author", "authors", "script", "scripts", "scripted", "screenplay",
               "screenplays", "creator", "creators"}),
    frozenset({"genre", "genres", "type", "types", "kind", "kinds", "sort", "sorts"}),
    frozenset({"tag", "tags", "topic", "topics", "describe", "describes", "describing", "terms"}),
)
#: Word endings dropped before two words are compared (actors, acted → act; directed, director → direct).
WORD_SUFFIXES = ("ors", "ers", "ing", "ed", "or", "er", "es", "s")
#: Words that ask for others around the same node ("who acted *with* X", "what *other* movies …"): a relation walked
#: there and back. Checked on: bench/data/movies_dev.jsonl and MetaQA dev (``2hop_dev.tsv``, the first 300).
CO_WORDS = frozenset({"with", "other", "together", "both", "same", "share", "shared", "co-star", "co-stars", "costar",
                      "costars"})


def is_co_word(word: str) -> bool:
    """Whether a lower-case ``word`` asks for the others around one node: one of :data:`CO_WORDS`, or one starting
    "co-" ("co-wrote")."""
    return word in CO_WORDS or word.startswith("co-")


def asks_for_others(text: str) -> bool:
    """Whether ``text`` has a word that asks for the others around one node (:func:`is_co_word`), so a path that walks
    its last relation back is one it may want. "With" alone does not count here: it also joins what a question
    describes ("the team *with* the mascot called Bernie Brewer"), and "share … with" or "co-star with" have their own
    word. Checked on: CWQ dev, MetaQA dev and WebQSP train (the path rankers refitted without it, held-out top-1
    0.776 → 0.783; ``bench/experiments/path-ranker.md``)."""
    return any(w != "with" and is_co_word(w) for w in re.findall(r"[a-z][a-z-]*", text.lower()))


#: "... starred who": a question that ends with its wh-word asks for a person too. Checked on: MetaQA dev.
WHO_LAST = re.compile(r"\b(who|whom)\s*\??\s*$", re.I)
#: The word that joins a relation to the entity ("acted *by* X", "the director *of* X", "share actors *with* X"): that
#: relation is the first hop. Checked on: MetaQA dev (2- and 3-hop) and bench/data/movies_dev.jsonl.
BINDING_WORDS = frozenset({"by", "of", "with"})
#: "worked with" / "collaborated with": the named node's own relation, then the one the question asks about.
WORKED_WITH = re.compile(r"\b(worked|collaborated|work|collaborate)\s+with\b", re.I)
#: Superlatives of a number a question names ("highest rated", "rate lowest"): True asks for the largest.
EXTREMES = {"highest": True, "best": True, "top": True, "most": True, "lowest": False, "worst": False, "least": False}
#: Comparison words before a number → Cypher operator: NUMBER_OPS' words, and the words of a year (BEFORE, AFTER;
#: "since" and "until" keep the year itself).
COMPARE_OPS = {**NUMBER_OPS, "after": ">", "since": ">=", "before": "<", "until": "<=", "later than": ">",
               "earlier than": "<"}
COMPARE = re.compile(r"\b(" + "|".join(sorted(COMPARE_OPS, key=len, reverse=True)) + r")\s+(-?\d+(?:\.\d+)?)\b",
                     re.I)

# ----------------------------------------------------------------------------------------------------------------------
# Freebase schema
# ----------------------------------------------------------------------------------------------------------------------
#: Keys (literal properties or relationship types) that hold a date: a start, or an end.
DATE_KEY = "(?i)(.*[._])?(from|to|start|end|start_date|end_date|date)$"
END_KEY = "(?i)(.*[._])?(to|end|end_date)$"
DATE_VALUE = "[12][0-9]{3}.*"
#: Keys of a number-holding node that are not its number (dates, the year of a dated integer, the id).
NOT_A_NUMBER_KEY = "(?i)(.*[._])?(from|to|start|end|start_date|end_date|date|year|id)$"
#: Type statements: a node most of whose edges are these is a type (*Country*, *Currency*), which a question names as
#: the kind of its answer ("what currency …"), rarely as its topic. Checked on: CWQ dev topic linking.
TYPE_RELATIONS = frozenset({"common.topic.notable_types", "type.object.type", "common.topic.notable_for",
                            "kg.object_profile.prominent_type"})
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
