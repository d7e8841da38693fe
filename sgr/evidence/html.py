"""One self-contained, offline HTML page showing the evidence behind an answer.

The page holds the question, the ranked answers, the evidence subgraph (from
:func:`sgr.evidence.graph.evidence_subgraph`) drawn interactively, the paths with their scores, and the
Cypher that ran. The drawing uses vis-network (npm ``vis-network``, standalone UMD build, pinned by
``sgr/assets/package-lock.json`` and vendored by ``scripts/vendor_js.sh``); the library is inlined
into the page's ``<script>``, so the file opens from disk with no network. Topic entities are drawn
orange, answers green, CVT nodes small and grey, other path nodes blue; an edge the store does not
hold is dashed red. The page exposes ``window.sgrEvidence = {network, nodes, edges, ready}`` for
scripted checks (the browser tests read node positions from it).
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from sgr.core.errors import ConfigError, InputError
from sgr.evidence.graph import ROLE_ANSWER, ROLE_TOPIC, EvidenceGraph
from sgr.core.types import Prediction

ASSET = "vis-network.min.js"
#: Node colours by role (background, border); tests check these on the canvas.
COLORS = {
    ROLE_TOPIC: ("#f59e0b", "#b45309"),
    ROLE_ANSWER: ("#16a34a", "#166534"),
    "path": ("#60a5fa", "#1d4ed8"),
    "cvt": ("#cbd5e1", "#64748b"),
}


def vis_network_js() -> str:
    """The vendored vis-network standalone build, without its source-map comment."""
    path = resources.files("sgr") / "assets" / ASSET
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"sgr/assets/{ASSET} is missing: run scripts/vendor_js.sh (needs npm)") from exc
    return re.sub(r"\n?//# sourceMappingURL=\S+\s*$", "\n", text)


def _short(rel: str) -> str:
    """Edge label: the last segment of a Freebase relation (``languages_spoken``)."""
    return rel.rsplit(".", 1)[-1]


def _vis_data(graph: EvidenceGraph) -> dict[str, Any]:
    nodes = []
    for n in graph.nodes:
        kind = n.role if n.role in (ROLE_TOPIC, ROLE_ANSWER) else ("cvt" if n.cvt else "path")
        bg, border = COLORS[kind]
        label = n.label if not (n.cvt and not n.name) else n.id
        nodes.append({
            "id": n.id, "label": label, "role": n.role, "group": kind,
            "title": f"{n.label}\n{n.id}\nrole: {n.role}, rank {n.rank}, score {n.score:.3g}"
                     + ("" if n.in_graph else "\nnot in the graph"),
            "color": {"background": bg, "border": border,
                      "highlight": {"background": bg, "border": "#111827"}},
            "size": 10 if kind == "cvt" else (22 if kind in (ROLE_TOPIC, ROLE_ANSWER) else 15),
            "borderWidth": 2 if n.in_graph else 4,
            "shapeProperties": {"borderDashes": False if n.in_graph else [4, 3]},
            "font": {"size": 14 if kind != "cvt" else 10, "bold": kind in (ROLE_TOPIC, ROLE_ANSWER)},
        })
    edges = []
    for i, e in enumerate(graph.edges):
        edges.append({
            "id": f"e{i}", "from": e.source, "to": e.target, "label": _short(e.type),
            "title": f"{e.type}\npath rank {e.rank}, score {e.score:.3g}"
                     + ("" if e.in_graph else "\nNOT in the graph"),
            "arrows": "to", "dashes": not e.in_graph,
            "color": {"color": "#64748b" if e.in_graph else "#dc2626"},
            "width": 3 if e.rank == 1 else 1.5,
        })
    return {"nodes": nodes, "edges": edges}


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#111827;background:#f8fafc}
header{padding:16px 24px;background:#1e293b;color:#f8fafc}
header h1{font-size:20px;margin:0 0 6px}
header .meta{font-size:13px;color:#cbd5e1}
main{padding:16px 24px;display:grid;grid-template-columns:minmax(0,3fr) minmax(280px,2fr);gap:16px}
section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:12px 16px}
h2{font-size:15px;margin:0 0 8px}
#graph{height:560px;border:1px solid #e2e8f0;border-radius:6px;background:#fff}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:50%;margin-right:5px;vertical-align:-1px}
ol.answers li{margin:3px 0}
.answer{background:#dcfce7;border:1px solid #16a34a;border-radius:4px;padding:0 5px}
.topic{background:#fef3c7;border:1px solid #f59e0b;border-radius:4px;padding:0 5px}
table{border-collapse:collapse;width:100%;font-size:13px}
td,th{border-bottom:1px solid #e2e8f0;padding:4px 6px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
pre{background:#0f172a;color:#e2e8f0;padding:10px;border-radius:6px;overflow:auto;font-size:12px;white-space:pre-wrap}
.wide{grid-column:1 / -1}
.warn{color:#b91c1c}
"""

_JS = """
(function () {
  var data = JSON.parse(document.getElementById('sgr-data').textContent);
  var nodes = new vis.DataSet(data.nodes);
  var edges = new vis.DataSet(data.edges);
  var container = document.getElementById('graph');
  var options = {
    layout: {randomSeed: 7},
    nodes: {shape: 'dot', font: {color: '#111827', strokeWidth: 3, strokeColor: '#ffffff'},
            widthConstraint: {maximum: 170}},
    edges: {font: {size: 11, align: 'middle', color: '#334155', strokeWidth: 0,
                   background: 'rgba(255,255,255,0.85)'},
            smooth: {type: 'dynamic'}},
    physics: {solver: 'forceAtlas2Based', stabilization: {iterations: 300, fit: true},
              forceAtlas2Based: {springLength: 120, gravitationalConstant: -60}},
    interaction: {hover: true, tooltipDelay: 120, navigationButtons: false}
  };
  var network = new vis.Network(container, {nodes: nodes, edges: edges}, options);
  window.sgrEvidence = {network: network, nodes: nodes, edges: edges, ready: false};
  network.once('stabilizationIterationsDone', function () {
    network.setOptions({physics: false});
    network.redraw();
    window.requestAnimationFrame(function () {
      network.fit({animation: false, maxZoomLevel: 1.5});
      window.requestAnimationFrame(function () { window.sgrEvidence.ready = true; });
    });
  });
  if (data.nodes.length === 0) { window.sgrEvidence.ready = true; }
})();
"""


def _json_for_script(obj: Any) -> str:
    """JSON safe inside ``<script>`` and still JSON: every ``<`` (``</script``, ``<!--``), ``>`` and ``&`` written as
    a ``\\u`` escape, which only a string can hold, so the text parses back to ``obj``; U+2028/U+2029 too (line
    breaks to older JavaScript)."""
    text = json.dumps(obj, ensure_ascii=False)
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text


def render_html(question_text: str, prediction: Prediction, graph: EvidenceGraph,
                question_id: str | None = None, redraw: str | None = None) -> str:
    """The page as a string (see :func:`write_html`)."""
    esc = html.escape
    nodes_by_id = {n.id: n for n in graph.nodes}
    topics = [n for n in graph.nodes if n.role == ROLE_TOPIC]
    answer_items = []
    for i, a in enumerate(prediction.answers, start=1):
        node = nodes_by_id.get(a.id or a.text)
        ident = f" <code>{esc(node.id)}</code>" if node and node.id != a.text else ""
        answer_items.append(f'<li><span class="answer">{esc(a.text)}</span>{ident} '
                            f'<small>score {a.score:.3g}</small></li>')
    answers_html = ("<ol class=\"answers\">" + "".join(answer_items) + "</ol>") if answer_items \
        else "<p>No answer.</p>"
    if prediction.confidence is not None:  # the calibrated P(the top answer is correct)
        answers_html = f"<p class=\"confidence\">confidence of the top answer: {prediction.confidence:.0%}</p>" \
            + answers_html
    path_rows = "".join(
        f"<tr><td class=\"num\">{p.rank}</td><td class=\"num\">{p.score:.4g}</td>"
        f"<td>{esc(p.text)}</td><td>{esc(p.source)}</td></tr>" for p in graph.paths)
    paths_html = ("<table><thead><tr><th>#</th><th>score</th><th>path</th><th>source</th></tr></thead>"
                  f"<tbody>{path_rows}</tbody></table>") if graph.paths else "<p>No reasoning paths.</p>"
    cypher_html = "".join(f"<pre class=\"cypher\">{esc(c)}</pre>" for c in prediction.cypher) \
        or "<p>No Cypher was generated for this answer (the evidence comes from the paths above).</p>"
    missing = graph.missing
    bad_edges = [e for e in graph.edges if not e.in_graph]
    warn = ""
    if missing or bad_edges:
        warn = (f'<p class="warn">{len(missing)} node(s) and {len(bad_edges)} edge(s) of this evidence are not in the '
                "graph (drawn dashed).</p>")
    meta = [f"method: {esc(prediction.method or '?')}"]
    if prediction.route:
        meta.append(f"route: {esc(prediction.route)}")
    if question_id:
        meta.append(f"saved as <code>{esc(question_id)}</code>")
    if prediction.question_id:
        meta.append(f"question id: {esc(prediction.question_id)}")
    if prediction.error:
        meta.append(f"<span class=\"warn\">error: {esc(prediction.error)}</span>")
    topics_html = " ".join(f'<span class="topic">{esc(n.label)}</span>' for n in topics) or "none"
    legend = "".join(f'<span><i style="background:{COLORS[k][0]};border:1px solid {COLORS[k][1]}"></i>{label}</span>'
                     for k, label in ((ROLE_TOPIC, "topic entity"), (ROLE_ANSWER, "answer"),
                                      ("path", "entity on a path"), ("cvt", "CVT (compound value)")))
    redraw_html = (f"<h2>Redraw in Neo4j Browser</h2><pre class=\"redraw\">{esc(redraw)}</pre>") if redraw else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sgr evidence: {esc(question_text)}</title>
<style>{_CSS}</style>
</head>
<body>
<header>
<h1 id="question">{esc(question_text)}</h1>
<div class="meta">{" · ".join(meta)}</div>
</header>
<main>
<section>
<h2>Evidence graph <small>({len(graph.nodes)} nodes, {len(graph.edges)} edges; drag to move, scroll to zoom)</small></h2>
<div class="legend">{legend}</div>
<div id="graph"></div>
{warn}
</section>
<section>
<h2>Answers</h2>
<div id="answers">{answers_html}</div>
<h2>Topic entities</h2>
<p id="topics">{topics_html}</p>
</section>
<section class="wide">
<h2>Reasoning paths</h2>
<div id="paths">{paths_html}</div>
</section>
<section class="wide">
<h2>Cypher that ran</h2>
{cypher_html}
{redraw_html}
</section>
</main>
<script id="sgr-data" type="application/json">{_json_for_script(_vis_data(graph))}</script>
<script>{vis_network_js()}</script>
<script>{_JS}</script>
</body>
</html>
"""


def write_html(path: Path | str, question_text: str, prediction: Prediction, graph: EvidenceGraph,
               question_id: str | None = None, redraw: str | None = None) -> Path:
    """Write the evidence page to ``path`` (folders created); return the path."""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(question_text, prediction, graph, question_id=question_id, redraw=redraw),
                       encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{out}: cannot write the HTML view ({exc.strerror or exc})") from exc
    return out
