"""Look at the evidence like a person: Neo4j Browser with the redraw query, and the offline HTML view.

Both run in headless Debian Chromium. The graph is a WebQSP slice loaded into the real Neo4j; the
prediction walks the record's gold relation paths in the store (no answers are written here), its
evidence is saved, and the URL / page that ``sgr ask`` prints is opened.
"""

from __future__ import annotations

import re

import pytest

import sgr.evidence as evidence

from sgr.evidence import html as html_view

QUESTIONS = ["WebQTest-0", "WebQTest-1"]  # Jamaica (1 hop), James K. Polk (2 hops through CVTs)


@pytest.mark.parametrize("qid", QUESTIONS)
def test_neo4j_browser_runs_the_redraw_query(webqsp_graph, gold, record, qid, chromium, browser_server, artifacts):
    rec = record(qid)
    pred = gold.gold_prediction(webqsp_graph, rec)
    ins = evidence.inspect_prediction(webqsp_graph, rec["question"], pred, "gold-walk", save=True,
                                      browser_server=browser_server)
    assert ins.browser_url and ins.browser_url in "\n".join(ins.lines())
    saved = evidence.load_evidence(webqsp_graph, ins.question_id)
    expected = {link.name or link.id for link in saved.links}
    assert {rec["q_entity"][0]} | {a.text for a in pred.answers} <= expected

    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    # everything it needs is local: the app over HTTP, Bolt over a WebSocket (not routed here);
    # the app's calls to fonts/analytics hosts are cut so that the test never waits on a network
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
    page = context.new_page()
    try:
        page.goto(ins.browser_url)
        # pre-pointed at our Bolt URL with the user filled in: it asks for the password (auth is on)
        from sgr.core.config import Neo4jSettings

        page.locator('[data-testid="password"]').fill(Neo4jSettings().resolved_password())
        page.locator('[data-testid="connect"]').click()
        page.get_by_text("You are connected as user").wait_for(timeout=90_000)
        editor = page.locator('[data-testid="activeEditor"]')
        shown = editor.inner_text().replace("\xa0", " ")
        for line in ins.query.splitlines():  # the editor holds the redraw query, line by line
            assert line in shown, line
        page.locator('[data-testid="editor-Run"]').click()

        frame = page.locator('[data-testid="frame"]', has=page.locator('[data-testid="vizInspector"]')).first
        frame.wait_for(timeout=60_000)
        n_nodes = len(expected) + 1  # the evidence entities and the SgrQuestion
        page.wait_for_function(f"document.querySelectorAll('svg g.node').length === {n_nodes}", timeout=30_000)
        overview = frame.locator('[data-testid="vizInspector"]').inner_text()
        assert f"Displaying {n_nodes} nodes" in overview
        assert frame.locator('[data-testid="property-details-overview-node-label-SgrQuestion"]').count() == 1
        for rel in {t for t in saved_types(saved)}:
            assert frame.locator(f'[data-testid="property-details-overview-relationship-type-{rel}"]').count() == 1
        page.wait_for_timeout(1500)  # let the force layout settle for the screenshot
        page.screenshot(path=str(artifacts / f"browser-{qid}-page.png"))
        frame.screenshot(path=str(artifacts / f"browser-{qid}.png"))

        # the Text view lists every returned node in full: all evidence entities are there
        frame.locator('[data-testid="cypherFrameSidebarAscii"]').click()
        text = frame.inner_text()
        for name in expected:
            assert name in text, name
        assert ins.question_id in text
    finally:
        context.close()


def saved_types(saved: evidence.SavedQuestion) -> set[str]:
    return {r for p in saved.paths for r in p["relations"]}


def _pixels(page, x: float, y: float, r: int = 3) -> list[list[int]]:
    """RGBA values of the (2r+1)² canvas pixels around DOM point (x, y) of the graph canvas."""
    return page.evaluate(
        """([x, y, r]) => {
             const c = document.querySelector('#graph canvas');
             const k = c.width / c.clientWidth;
             const d = c.getContext('2d').getImageData(Math.round((x - r) * k), Math.round((y - r) * k),
                                                       (2 * r + 1), (2 * r + 1)).data;
             const out = [];
             for (let i = 0; i < d.length; i += 4) out.push([d[i], d[i + 1], d[i + 2], d[i + 3]]);
             return out;
           }""", [x, y, r])


def _hex(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


@pytest.mark.parametrize("qid", QUESTIONS)
def test_html_view_draws_topic_and_answers_offline(webqsp_graph, gold, record, qid, chromium, artifacts, tmp_path):
    rec = record(qid)
    pred = gold.gold_prediction(webqsp_graph, rec)
    out = tmp_path / f"{qid}.html"
    ins = evidence.inspect_prediction(webqsp_graph, rec["question"], pred, "gold-walk", save=True, html=out)
    graph = evidence.evidence_subgraph(webqsp_graph, pred)

    context = chromium.new_context(viewport={"width": 1400, "height": 1000}, offline=True)
    requested: list[str] = []
    context.route("**/*", lambda route: (requested.append(route.request.url),
                                         route.continue_() if route.request.url.startswith("file:")
                                         else route.abort()))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(ins.html.resolve().as_uri())
        page.wait_for_function("window.sgrEvidence && window.sgrEvidence.ready === true", timeout=60_000)
        assert errors == []
        assert all(u.startswith("file:") for u in requested), requested

        drawn = page.evaluate("window.sgrEvidence.nodes.get().map(n => [n.id, n.role])")
        assert {tuple(x) for x in drawn} == {(n.id, n.role) for n in graph.nodes}
        assert page.evaluate("window.sgrEvidence.edges.length") == len(graph.edges)
        positions = page.evaluate(
            """() => { const net = window.sgrEvidence.network, p = net.getPositions(), out = {};
                       for (const k in p) out[k] = net.canvasToDOM(p[k]); return out; }""")
        width, height = page.evaluate("[document.querySelector('#graph canvas').clientWidth, "
                                      "document.querySelector('#graph canvas').clientHeight]")
        highlighted = [n for n in graph.nodes if n.role in (evidence.ROLE_TOPIC, evidence.ROLE_ANSWER)]
        assert {n.id for n in highlighted} >= {rec["q_entity"][0]} | {a.id for a in pred.answers}
        for node in highlighted:
            x, y = positions[node.id]["x"], positions[node.id]["y"]
            assert 0 < x < width and 0 < y < height, (node.id, x, y)
            want = _hex(html_view.COLORS[node.role][0])
            pix = _pixels(page, x, y)
            hits = sum(1 for p in pix if p[3] > 200 and all(abs(p[i] - want[i]) <= 16 for i in range(3)))
            assert hits >= len(pix) // 2, (node.id, node.role, pix[len(pix) // 2])
        # and the canvas is not painted all over: its corner stays empty
        assert all(p[3] == 0 for p in _pixels(page, 4, 4, 2))

        assert page.locator("#question").inner_text() == rec["question"]
        answers_text = page.locator("#answers").inner_text()
        for a in pred.answers:
            assert a.text in answers_text
        assert page.locator("#paths tbody tr").count() == len(graph.paths)
        assert re.search(r"Cypher that ran", page.content())
        page.screenshot(path=str(artifacts / f"html-{qid}.png"), full_page=True)
    finally:
        context.close()
