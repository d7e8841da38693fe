"""The evidence behind an answer: read it from Neo4j, save it beside the data, look at it.

Modules, each importing only the ones before it: :mod:`~sgr.evidence.graph` (the evidence subgraph and
the one redraw query), :mod:`~sgr.evidence.saved` (``(:SgrQuestion)-[:SGR_EVIDENCE]->(entity)``:
save, list, load, clear), :mod:`~sgr.evidence.html` (the offline view), :mod:`~sgr.evidence.inspect`
(one call for ``sgr ask --save/--html`` and ``sgr evidence show``).
"""

from sgr.evidence.graph import (ROLE_ANSWER, ROLE_PATH, ROLE_TOPIC, ROLES, EvidenceEdge, EvidenceGraph, EvidenceNode,
                                EvidencePath, evidence_subgraph, redraw_query)
from sgr.evidence.html import render_html, write_html
from sgr.evidence.inspect import Inspection, inspect_prediction, inspect_saved
from sgr.evidence.saved import (QuestionSummary, SavedQuestion, clear_evidence, list_evidence, load_evidence,
                                save_evidence)

__all__ = ["ROLES", "ROLE_ANSWER", "ROLE_PATH", "ROLE_TOPIC", "EvidenceEdge", "EvidenceGraph", "EvidenceNode",
           "EvidencePath", "Inspection", "QuestionSummary", "SavedQuestion", "clear_evidence", "evidence_subgraph",
           "inspect_prediction", "inspect_saved", "list_evidence", "load_evidence", "redraw_query", "render_html",
           "save_evidence", "write_html"]
