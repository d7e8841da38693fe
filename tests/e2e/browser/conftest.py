"""Fixtures of the browser tests: headless Debian Chromium driven by Playwright, the Browser server.

Chromium comes from Debian (``apt-get install -y chromium``), never from ``playwright install``:
Playwright launches ``/usr/bin/chromium`` (or ``SGR_CHROMIUM``) with the flags below.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sgr.core.config import repo_root

CHROMIUM = os.environ.get("SGR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = repo_root() / "tests" / "artifacts"


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium (Playwright ``Browser``) for the session."""
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} not found: install Debian's Chromium (`apt-get install -y chromium`) "
                    "or set SGR_CHROMIUM; deselect these tests with -m 'not browser'")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the Python package playwright is missing: `.venv/bin/pip install -e '.[dev]'`")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def browser_server(neo4j_uri, tmp_path_factory):
    """The Neo4j Browser app served on 127.0.0.1 for the test Neo4j (stopped at the end)."""
    from sgr.graph import browser

    server = browser.start_server(neo4j_uri, log_dir=tmp_path_factory.mktemp("browser"))
    yield server
    browser.stop_server(server.pid)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """tests/artifacts/ (git-ignored): screenshots the tests leave behind for people to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
