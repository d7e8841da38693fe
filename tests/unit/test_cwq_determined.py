"""The strata of bench/cwq_determined.py: what a CWQ dev question's own evidence lets a method decide."""

from bench.cwq_determined import run_figures, stratum

SPARQL = "SELECT DISTINCT ?x WHERE { ns:m.1 ns:film.actor.film ?y . ?y ns:film.performance.film ?x . }"


def record(graph, q_entity=("Logan Lerman",), answer=("Hoot",), sparql=SPARQL):
    return {"graph": [list(t) for t in graph], "q_entity": list(q_entity), "a_entity": list(answer),
            "answer": list(answer), "sparql": sparql}


def test_each_question_is_in_the_first_stratum_that_holds():
    walk = [("Logan Lerman", "film.actor.film", "m.p"), ("m.p", "film.performance.film", "Hoot")]
    assert stratum(record(walk)) == "determined"
    assert stratum(record(walk, answer=("My One and Only",))) == "no_gold"
    assert stratum(record(walk, q_entity=("Logan Lerman", "Guy Barnes"))) == "topic_missing"
    dated = SPARQL.replace("}", 'FILTER (xsd:dateTime(?d) < "2004"^^xsd:dateTime) }')
    assert stratum(record(walk, sparql=dated)) == "literal"
    assert stratum(record(walk, answer=("hoot",))) == "determined"  # names compared normalised


def test_hits_per_stratum_and_type():
    kind = {"a": "determined", "b": "determined", "c": "literal"}
    preds = {q: {"qtype": "conjunction", "scores": {"hits1_strict": h}} for q, h in (("a", 1.0), ("b", 0.0), ("c", 1.0))}
    preds["d"] = {"qtype": "conjunction", "scores": None}  # unscored: left out
    summary: dict = {}
    run_figures("x", preds, kind, summary)
    assert summary["x/hits1"] == round(2 / 3, 4) and summary["x/determined/hits1"] == 0.5
    assert summary["x/determined/n"] == 2 and summary["x/literal/conjunction/hits1"] == 1.0
    assert summary["x/no_gold/n"] == 0 and summary["x/no_gold/hits1"] is None
