"""One call for ``sgr ask --save/--html`` (and ``sgr evidence show``): where to look at the evidence.

:func:`inspect_prediction` builds the evidence subgraph (:mod:`sgr.evidence.graph`), saves it when asked
(:mod:`sgr.evidence.saved`), writes the offline HTML view when asked (:mod:`sgr.evidence.html`), and
builds the Neo4j Browser URL of :func:`sgr.evidence.graph.redraw_query` (:mod:`sgr.graph.browser`);
:func:`inspect_saved` does the same for evidence saved earlier.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sgr.core.types import Prediction
from sgr.evidence.graph import EvidenceGraph, evidence_subgraph, is_profiled, redraw_query
from sgr.evidence.html import write_html
from sgr.evidence.saved import SavedQuestion, load_evidence, save_evidence
from sgr.graph import browser
from sgr.graph.store import GraphStore


@dataclass
class Inspection:
    """What ``sgr ask --save/--html`` prints: where to look at the evidence."""

    query: str  # the redraw query (of the saved question when saved)
    question_id: str | None = None
    browser_url: str | None = None
    html: Path | None = None

    def lines(self) -> list[str]:
        out = []
        if self.question_id:
            out.append(f"evidence saved as {self.question_id} (`sgr evidence show {self.question_id}`)")
        if self.html:
            out.append(f"HTML view: {self.html}")
        if self.browser_url:
            out.append(f"Neo4j Browser: {self.browser_url}")
        else:
            out.append("Neo4j Browser: not served (start Neo4j with `sgr neo4j start --browser`)")
        out.append("Cypher to draw the evidence:")
        out.append(self.query)
        return out


def _finish(graph: EvidenceGraph, question_text: str, prediction: Prediction, qid: str | None,
            html: Path | str | None, browser_server: browser.BrowserServer | None) -> Inspection:
    profiled = is_profiled(prediction)
    if qid:
        query = redraw_query(question_id=qid, profiled=profiled)
    elif profiled and prediction.extra.get("redraw"):  # the answering query's own walks (sgr.methods.sgr.profiled)
        query = prediction.extra["redraw"]
    else:
        query = redraw_query(triples=graph.triples(), node_ids=[n.id for n in graph.nodes if n.in_graph],
                             profiled=profiled)
    out_html = write_html(html, question_text, prediction, graph, question_id=qid, redraw=query) if html else None
    server = browser_server or browser.running()
    url = browser.browser_url_for(query, server) if server else None
    return Inspection(query=query, question_id=qid, browser_url=url, html=out_html)


def inspect_prediction(store: GraphStore, question_text: str, prediction: Prediction, method: str,
                       save: bool = False, html: Path | str | None = None,
                       topic_ids: list[str] | None = None,
                       browser_server: browser.BrowserServer | None = None) -> Inspection:
    """Save the evidence (``save``), write the HTML view (``html``) and build the Browser URL.

    The Browser URL opens Neo4j Browser (``browser_server``, else the one ``sgr neo4j start
    --browser`` serves, if any) with the redraw query, of the saved question when ``save``.
    """
    if is_profiled(prediction) and not topic_ids:  # a user's own graph: the linked nodes (sgr.methods.sgr.profiled)
        topic_ids = [e["id"] for e in prediction.extra.get("entities", [])]
    graph = evidence_subgraph(store, prediction, topic_ids=topic_ids)
    qid = save_evidence(store, question_text, prediction, method, graph=graph) if save else None
    return _finish(graph, question_text, prediction, qid, html, browser_server)


def inspect_saved(store: GraphStore, question_id: str, html: Path | str | None = None,
                  browser_server: browser.BrowserServer | None = None) -> tuple[SavedQuestion, Inspection]:
    """The saved question ``question_id`` (InputError when there is none) and where to look at it."""
    saved = load_evidence(store, question_id)
    prediction = saved.to_prediction()
    graph = evidence_subgraph(store, prediction, topic_ids=saved.topic_ids())
    return saved, _finish(graph, saved.text, prediction, saved.id, html, browser_server)
