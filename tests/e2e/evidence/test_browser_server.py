"""The Neo4j Browser HTTP server (no Chromium needed): app files, discovery JSON, URLs."""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest

from sgr.graph import browser


def test_edit_url_round_trips_the_query():
    query = "MATCH p = (q:SgrQuestion {id: 'a&b=c'})\nRETURN p  // 100% #1"
    url = browser.edit_url(browser.connect_url("http://127.0.0.1:1/browser/", "bolt://127.0.0.1:7687"), query)
    params = parse_qs(urlparse(url).query)
    assert params["arg"] == [query] and params["cmd"] == ["edit"]
    assert params["dbms"] == ["bolt://127.0.0.1:7687"] and params["preselectAuthMethod"] == ["NO_AUTH"]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
        return None


def test_server_serves_app_and_discovery(neo4j_uri, tmp_path):
    server = browser.start_server(neo4j_uri, log_dir=tmp_path)
    try:
        base = f"http://127.0.0.1:{server.port}"
        with urllib.request.urlopen(base + "/browser/") as resp:
            page = resp.read().decode()
        assert "<title>Neo4j Browser</title>" in page
        scripts = [s for s in page.split('src="')[1:]]
        first_js = scripts[-1].split('"', 1)[0]
        with urllib.request.urlopen(base + "/browser/" + first_js) as resp:
            assert resp.status == 200 and len(resp.read()) > 10_000
        req = urllib.request.Request(base + "/", headers={"Accept": "application/json"})
        with urllib.request.urlopen(req) as resp:
            assert json.loads(resp.read())["bolt_direct"] == neo4j_uri
        opener = urllib.request.build_opener(_NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as err:
            opener.open(base + "/")
        assert err.value.code == 302 and err.value.headers["Location"] == "/browser/"
        assert browser.browser_url_for("RETURN 1", server).startswith(server.url + "&cmd=edit&arg=RETURN%201")
    finally:
        browser.stop_server(server.pid)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{server.port}/browser/", timeout=2)


def test_browser_url_without_a_server_says_how_to_start_one(monkeypatch):
    from sgr.core.errors import Neo4jServerError

    monkeypatch.setattr(browser, "running", lambda: None)
    with pytest.raises(Neo4jServerError, match="--browser"):
        browser.browser_url_for("RETURN 1")
