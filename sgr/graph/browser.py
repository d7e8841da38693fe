"""Serve the Neo4j Browser app next to the embedded Neo4j, pre-pointed at its Bolt port.

The embedded Neo4j (``sgr.neo4j_server``) has no HTTP connector, so it serves no Browser. The
Browser is a static single-page app that talks Bolt over a WebSocket straight to the Bolt port;
Maven Central ships it as ``org.neo4j.client:neo4j-browser`` (the jar holds the app under
``browser/``), and ``java/pom.xml`` copies that jar into ``java/target/browser/``. This module

1. unzips the jar's ``browser/`` folder once into ``cache_dir("neo4j-browser")/<version>/``;
2. runs a small HTTP server (:mod:`http.server`, a detached ``python -m sgr.browser`` process) on
   127.0.0.1 that serves the app under ``/browser/`` and answers ``GET /`` like Neo4j's own HTTP
   connector does: JSON discovery data (``{"bolt_direct": "bolt://127.0.0.1:PORT", …}``) for
   ``Accept: application/json``, else a redirect to ``/browser/``;
3. builds Browser URLs with the documented URL parameters (Neo4j Browser manual, *Browser URL
   parameters*): ``dbms=bolt://neo4j@127.0.0.1:PORT`` pre-fills the connection and the user name,
   ``preselectAuthMethod=NATIVE`` asks for the password (the embedded server runs with authentication
   on; the password is in ``SGR_HOME/neo4j/password`` and never goes into a URL or a log), or
   ``preselectAuthMethod=NO_AUTH`` when it was started with ``--no-auth``; ``cmd=edit&arg=<query>``
   puts a query into the editor, ready to run.

``serve(info)`` records the server in ``SGR_HOME/neo4j/server.json`` (``browser_url``,
``browser_pid``) so ``sgr neo4j stop`` stops it too; ``browser_url_for(query)`` is what
``sgr ask`` prints.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, urlencode

from sgr.core.config import cache_dir
from sgr.core.errors import Neo4jServerError
from sgr.core.files import sha256_file

#: The Browser release that ``java/pom.xml`` copies (the last one published on Maven Central).
BROWSER_VERSION = "5.24.0"
#: The Neo4j version reported in the discovery JSON (the embedded server's series).
NEO4J_VERSION = "5.26.0"


@dataclass
class BrowserServer:
    """A running Browser HTTP server: where it listens and which Bolt URL it points at."""

    pid: int
    port: int
    bolt_uri: str
    root: str
    log: str
    auth: bool = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/browser/"

    @property
    def url(self) -> str:
        """The Browser, pre-pointed at the Bolt URL (user ``neo4j`` pre-filled when auth is on)."""
        return connect_url(self.base_url, self.bolt_uri, user="neo4j" if self.auth else None)


# -- the app's files --------------------------------------------------------------------------
def browser_jar() -> Path:
    """The ``neo4j-browser`` jar copied by ``java/pom.xml`` (built with Maven on first use)."""
    from sgr.graph.server import build, java_dir

    folder = java_dir() / "target" / "browser"
    jars = sorted(folder.glob("neo4j-browser-*.jar"))
    if not jars:
        build(quiet=True)
        jars = sorted(folder.glob("neo4j-browser-*.jar"))
    if not jars:
        raise Neo4jServerError(
            f"no neo4j-browser jar in {folder}: run `mvn -B -f {java_dir() / 'pom.xml'} package -DskipTests` "
            "(it copies org.neo4j.client:neo4j-browser from Maven Central)")
    return jars[-1]


def static_root(jar: Path | None = None) -> Path:
    """Unzip the jar's ``browser/`` folder once; return the folder that holds ``browser/``.

    The extraction goes to a temporary sibling first and is renamed into place, so a killed
    extraction never leaves a half-filled cache behind. A marker file holds the jar's SHA-256.
    """
    jar = jar or browser_jar()
    digest = sha256_file(jar)
    version = jar.stem.removeprefix("neo4j-browser-") or BROWSER_VERSION
    root = cache_dir("neo4j-browser") / version
    marker = root / "jar.sha256"
    if marker.exists() and marker.read_text().strip() == digest and (root / "browser" / "index.html").is_file():
        return root
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=root.parent))
    try:
        with zipfile.ZipFile(jar) as zf:
            members = [m for m in zf.namelist() if m.startswith("browser/") and ".." not in m]
            if "browser/index.html" not in members:
                raise Neo4jServerError(f"{jar} holds no browser/index.html: not a neo4j-browser jar")
            zf.extractall(tmp, members)
        (tmp / "jar.sha256").write_text(digest + "\n")
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
    except zipfile.BadZipFile as exc:
        raise Neo4jServerError(f"{jar} is not a readable jar ({exc}): delete it and run `sgr neo4j start` again") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root


# -- URLs -------------------------------------------------------------------------------------
def connect_url(base_url: str, bolt_uri: str, user: str | None = None) -> str:
    """``base_url`` with ``dbms=bolt://USER@host:port`` and ``preselectAuthMethod=NATIVE`` (the Browser asks
    for the password), or ``dbms=<bolt>`` and ``preselectAuthMethod=NO_AUTH`` when ``user`` is None."""
    if user is None:
        return base_url + "?" + urlencode({"dbms": bolt_uri, "preselectAuthMethod": "NO_AUTH"}, safe=":/")
    scheme, rest = bolt_uri.split("://", 1)
    dbms = f"{scheme}://{quote(user, safe='')}@{rest.split('@', 1)[-1]}"
    return base_url + "?" + urlencode({"dbms": dbms, "preselectAuthMethod": "NATIVE"}, safe=":/@")


def edit_url(url: str, query: str) -> str:
    """A Browser URL that opens with ``query`` in the editor (``cmd=edit&arg=<query>``)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}cmd=edit&arg={quote(query, safe='')}"


def running() -> BrowserServer | None:
    """The Browser served next to the running embedded Neo4j, if any."""
    from sgr.graph.server import _pid_alive, read_state

    info = read_state()
    if info is None or not info.browser_pid or not info.browser_url or not _pid_alive(info.browser_pid):
        return None
    port = int(info.browser_url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    return BrowserServer(pid=info.browser_pid, port=port, bolt_uri=info.uri, root="", log="", auth=info.auth)


def browser_url_for(query: str, server: BrowserServer | None = None) -> str:
    """The URL of the served Browser with ``query`` in its editor.

    Raises :class:`Neo4jServerError` when no Browser is served (start one with
    ``sgr neo4j start --browser``).
    """
    server = server or running()
    if server is None:
        raise Neo4jServerError("Neo4j Browser is not being served: start it with `sgr neo4j start --browser`")
    return edit_url(server.url, query)


# -- the HTTP server --------------------------------------------------------------------------
def _http_ok(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(bolt_uri: str, port: int | None = None, wait_s: float = 30.0,
                 log_dir: Path | None = None, auth: bool = True) -> BrowserServer:
    """Start the Browser HTTP server (a detached process) for ``bolt_uri`` and wait until it answers."""
    from sgr.graph.server import free_port

    root = static_root()
    port = port or free_port()
    log_dir = log_dir or cache_dir("neo4j-browser")
    log = Path(log_dir) / f"browser-{port}.log"
    cmd = [sys.executable, "-m", "sgr.graph.browser", "--root", str(root), "--port", str(port), "--bolt", bolt_uri]
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=str(root))
    server = BrowserServer(pid=proc.pid, port=port, bolt_uri=bolt_uri, root=str(root), log=str(log), auth=auth)
    deadline = time.time() + wait_s
    while time.time() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            raise Neo4jServerError(f"the Browser server exited (code {proc.returncode}); log {log}: " + " | ".join(tail))
        if _http_ok(f"http://127.0.0.1:{port}/browser/index.html"):
            return server
        time.sleep(0.2)
    stop_server(server.pid)
    raise Neo4jServerError(f"the Browser server did not answer on port {port} within {wait_s:.0f}s; see {log}")


def stop_server(pid: int, timeout_s: float = 5.0) -> None:
    """Stop a Browser server started by :func:`start_server` (SIGTERM, then SIGKILL)."""
    from sgr.graph.server import _pid_alive

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + timeout_s
    while time.time() < deadline and _pid_alive(pid):
        time.sleep(0.05)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
    try:  # reap it when it is our child
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def serve(info: "ServerInfo", port: int | None = None) -> str:  # noqa: F821  (sgr.graph.server.ServerInfo)
    """Serve the Browser for the running embedded Neo4j ``info``; return its URL.

    Reuses a Browser already served for this server; records ``browser_url`` and ``browser_pid``
    in the server state so ``sgr neo4j stop`` stops it.
    """
    from sgr.graph.server import update_state

    current = running()
    if current is not None and current.bolt_uri == info.uri:
        return current.url
    server = start_server(info.uri, port=port, log_dir=Path(info.log).parent, auth=info.auth)
    update_state(browser_url=server.url, browser_pid=server.pid)
    return server.url


class _Handler(SimpleHTTPRequestHandler):
    """Static files of the app, plus Neo4j's discovery answer at ``/``."""

    bolt_uri = ""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        path = self.path.split("?", 1)[0]
        if path in ("/", ""):
            if "application/json" in self.headers.get("Accept", ""):
                body = json.dumps({"bolt_direct": self.bolt_uri, "neo4j_version": NEO4J_VERSION,
                                   "neo4j_edition": "community"}).encode()
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", "/browser/")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        sys.stdout.write("%s %s\n" % (self.log_date_time_string(), format % args))
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    """``python -m sgr.graph.browser --root DIR --port P --bolt URI``: the server process itself."""
    parser = argparse.ArgumentParser(description="Serve the Neo4j Browser app on 127.0.0.1.")
    parser.add_argument("--root", required=True, help="folder that holds browser/")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bolt", required=True, help="Bolt URL the app connects to")
    args = parser.parse_args(argv)

    handler = type("Handler", (_Handler,), {"bolt_uri": args.bolt})
    root = args.root

    def factory(*a: object, **kw: object) -> _Handler:
        return handler(*a, directory=root, **kw)

    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), factory)
    def _terminate(*_: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _terminate)
    print(f"SGR-BROWSER-READY http://127.0.0.1:{args.port}/browser/ -> {args.bolt}", flush=True)
    try:
        httpd.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
