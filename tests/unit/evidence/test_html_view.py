"""The HTML evidence page as a file: self-contained, escaped, with the graph data it will draw."""

from __future__ import annotations

import json
import re

import pytest

import sgr.evidence as evidence

from sgr.evidence import html as html_view
from sgr.evidence.graph import EvidenceEdge, EvidenceGraph, EvidenceNode, EvidencePath
from sgr.core.types import Answer, Prediction


def _graph() -> tuple[Prediction, EvidenceGraph]:
    nodes = [EvidenceNode("Jamaica", "Jamaica", "topic", 1, 0.9),
             EvidenceNode("m.0x", None, "path", 1, 0.9, cvt=True),
             EvidenceNode("Lang </script><b>", "Lang </script><b>", "answer", 1, 0.9),
             EvidenceNode("ghost", None, "path", 2, 0.2, in_graph=False)]
    edges = [EvidenceEdge("Jamaica", "a.b.c", "m.0x", 1, 0.9),
             EvidenceEdge("m.0x", "a.b.d", "Lang </script><b>", 1, 0.9),
             EvidenceEdge("Jamaica", "x.y.z", "ghost", 2, 0.2, in_graph=False)]
    paths = [EvidencePath(1, 0.9, ["Jamaica", "m.0x", "Lang </script><b>"], ["a.b.c", "a.b.d"], ["out", "out"],
                          ["Jamaica", None, "Lang </script><b>"], "test", "Jamaica -[a.b.c]-> m.0x -[a.b.d]-> Lang")]
    pred = Prediction(question_id="q1", answers=[Answer("Lang </script><b>", "Lang </script><b>", 0.9)],
                      method="sgr", cypher=["MATCH (n) WHERE n.name = '<x>' RETURN n"])
    return pred, EvidenceGraph(nodes, edges, paths)


def test_page_is_self_contained_and_escaped(tmp_path):
    pred, g = _graph()
    out = html_view.write_html(tmp_path / "a" / "p.html", "what <i>is</i> spoken?", pred, g,
                               question_id="abc", redraw=evidence.redraw_query(question_id="abc"))
    page = out.read_text()
    # no external resource: no src/href to a URL, no source map
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "sourceMappingURL" not in page
    assert html_view.vis_network_js()[:2000] in page
    # user text is escaped in HTML and cannot close the data <script>
    assert "what &lt;i&gt;is&lt;/i&gt; spoken?" in page
    assert '<span class="answer">Lang &lt;/script&gt;&lt;b&gt;</span>' in page
    assert page.count("</script>") == 3  # the data, the library, the page's own script
    data_block = re.search(r'<script id="sgr-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    data = json.loads(data_block)  # the script text is JSON as it stands
    roles = {n["id"]: n["role"] for n in data["nodes"]}
    assert roles == {"Jamaica": "topic", "m.0x": "path", "Lang </script><b>": "answer", "ghost": "path"}
    colors = {n["id"]: n["color"]["background"] for n in data["nodes"]}
    assert colors["Jamaica"] == html_view.COLORS["topic"][0]
    assert colors["Lang </script><b>"] == html_view.COLORS["answer"][0]
    assert colors["m.0x"] == html_view.COLORS["cvt"][0]
    dashed = {e["to"]: e["dashes"] for e in data["edges"]}
    assert dashed == {"m.0x": False, "Lang </script><b>": False, "ghost": True}
    assert "1 node(s) and 1 edge(s)" in page
    assert "MATCH (n) WHERE n.name = &#x27;&lt;x&gt;&#x27; RETURN n" in page
    assert "SgrQuestion {id: &quot;abc&quot;}" in page


@pytest.mark.parametrize("name", ["a <!-- b", "<!--", "x</script><!--<script>", "</SCRIPT", "a&b>c", "\u2028"])
def test_script_data_is_json_whatever_the_names(name):
    """Issue 42 item 5: ``<!--`` in a name was written as ``<\\!--``, which is not JSON (the graph did not draw)."""
    obj = {"nodes": [{"id": name, "label": name, "title": f"{name}\n{name}"}]}
    text = html_view._json_for_script(obj)
    assert json.loads(text) == obj
    assert not re.search(r"<|>|&", text)


def test_missing_asset_is_a_one_line_error(monkeypatch):
    from sgr.core.errors import ConfigError

    monkeypatch.setattr(html_view, "ASSET", "no-such-file.js")
    with pytest.raises(ConfigError, match="vendor_js.sh"):
        html_view.vis_network_js()
