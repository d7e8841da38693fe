"""Offline bulk import into the embedded Neo4j: stop the server, run neo4j-admin's importer, restart.

``neo4j-admin database import full`` writes store files directly (no transactions, no Cypher), an
order of magnitude faster than any Bolt client, but only into a database that is not running. The
importer is ``org.neo4j.cli.AdminTool`` from the Maven Central artifacts ``org.neo4j:neo4j-command-line``
and ``org.neo4j:neo4j-import-tool`` (same 5.26.x as the server, ``java/import/pom.xml``; no Neo4j
distribution). :func:`server_stopped` stops the embedded server that serves
``uri`` while the caller writes its CSV, :func:`run_import` imports into its store
(``--overwrite-destination``: the database is replaced), and the server starts again on the same port
and store, whatever happened; :class:`ImportSummary` is the tool's report in a few numbers.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sgr.core.config import LoadSettings, read_settings
from sgr.core.errors import LoadError, Neo4jServerError
from sgr.graph import server

DATABASE = "neo4j"
#: Heap and off-heap memory the importer may use (it sizes its caches from these).


@dataclass
class ImportSummary:
    """What the import tool reported."""

    nodes: int
    relationships: int
    properties: int
    seconds: float
    peak_memory: str
    bad_entries: int
    log: str
    stages: dict[str, float] = field(default_factory=dict)  # the importer's own stages (seconds), as it reports them
    cpu_seconds: float | None = None  # the importer process's user + system CPU time

    def line(self) -> str:
        bad = f", {self.bad_entries:,} bad entries (see {self.log})" if self.bad_entries else ""
        return (f"neo4j-admin import: {self.nodes:,} nodes, {self.relationships:,} relationships, "
                f"{self.properties:,} properties in {self.seconds:.1f} s, peak memory {self.peak_memory}{bad}")


def import_tool_classpath() -> str:
    """The importer's classpath, built with Maven from ``java/import/pom.xml`` on first use."""
    pom = server.java_dir() / "import" / "pom.xml"
    lib = pom.parent / "target" / "lib"
    if not pom.exists():
        raise Neo4jServerError(f"no import-tool build file at {pom} (set SGR_JAVA_DIR to the checkout's java/ folder)")
    if not (lib.is_dir() and any(lib.glob("neo4j-import-tool-*.jar"))):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jServerError("`mvn` was not found on PATH: install Maven so sgr can fetch neo4j-admin's importer")
        proc = subprocess.run([mvn, "-B", "-q", "-f", str(pom), "package"], capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            raise Neo4jServerError("building neo4j-admin's importer with Maven failed: " + " | ".join(tail))
    return f"{lib}/*"


def embedded_server_for(uri: str) -> server.ServerInfo | None:
    """The embedded server's state when it is the one serving ``uri``, else None."""
    info = server.status()
    if info is None:
        return None
    m = re.match(r"^(?:bolt|neo4j)://(127\.0\.0\.1|localhost):(\d+)/?$", uri)
    return info if m is not None and int(m.group(2)) == info.port else None


def run_import(home: Path, nodes: list[str], relationships: list[str], workdir: Path,
               multiline: bool = False, threads: int | None = None, id_type: str = "string") -> ImportSummary:
    """``neo4j-admin database import full`` into the store under ``home`` (the server must be stopped).

    ``nodes``/``relationships``: the tool's file groups, e.g. ``"Entity=header.csv,part.csv"``;
    ``id_type``: ``string`` (``:ID`` columns hold keys the importer maps) or ``actual`` (node numbers).
    """
    java = shutil.which("java")
    if java is None:
        raise Neo4jServerError("`java` was not found on PATH: install a Java 17 runtime")
    conf = workdir / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "neo4j.conf").write_text("")
    report = workdir / "import.report"
    log = workdir / "import.log"
    cmd = [java, f"-Xmx{read_settings(LoadSettings).import_heap}", *server.JVM_FLAGS, "-cp", import_tool_classpath(), "org.neo4j.cli.AdminTool",
           "database", "import", "full", DATABASE, "--overwrite-destination=true", f"--id-type={id_type}",
           f"--report-file={report}", f"--max-off-heap-memory={read_settings(LoadSettings).import_off_heap}",
           f"--threads={threads or max(os.cpu_count() or 1, 1)}", f"--multiline-fields={str(multiline).lower()}",
           "--bad-tolerance=0", *[f"--nodes={n}" for n in nodes], *[f"--relationships={r}" for r in relationships]]
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(conf)}
    t0 = time.perf_counter()
    cpu0 = _children_cpu()
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=workdir)
    seconds = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    text = log.read_text(errors="replace")
    kept = server.state_dir() / "import.log"
    shutil.copyfile(log, kept)
    if proc.returncode != 0:
        reason = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith((".", "-"))][-3:]
        raise LoadError(f"neo4j-admin import failed (exit {proc.returncode}): {' | '.join(reason)} (full log: {kept})")
    if report.exists():
        shutil.copyfile(report, server.state_dir() / "import.report")
    return ImportSummary(nodes=_number(text, r"([\d,]+) nodes"), relationships=_number(text, r"([\d,]+) relationships"),
                         properties=_number(text, r"([\d,]+) properties"), seconds=seconds,
                         peak_memory=(re.search(r"Peak memory usage: (\S+)", text) or [None, "?"])[1],
                         bad_entries=_count_lines(report), log=str(kept), stages=_stages(text),
                         cpu_seconds=round(cpu, 2))


def _children_cpu() -> float:
    """User + system CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _stages(text: str) -> dict[str, float]:
    """``{stage: seconds}`` from the importer's ``<stage> COMPLETED in 1m 2s 345ms`` lines."""
    out = {}
    for name, took in re.findall(r"^(\S.*?) COMPLETED in ((?:\d+[hms]s? ?)+)", text, flags=re.M):
        seconds = 0.0
        for value, unit in re.findall(r"(\d+)(ms|h|m|s)", took):
            seconds += int(value) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
        out[name.strip()] = round(seconds, 3)
    return out


def _number(text: str, pattern: str) -> int:
    found = re.findall(r"^\s*" + pattern + r"\s*$", text, flags=re.M)
    return int(found[-1].replace(",", "")) if found else 0


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


@contextmanager
def server_stopped(uri: str) -> Iterator[tuple[Path, Callable[[], None]]]:
    """Stop the embedded server on ``uri`` in the background (a clean shutdown takes seconds that the caller
    spends writing its CSV) and yield its store folder and a ``wait()`` that returns once it is down; on exit
    start it again on the same port and store with the heap and page cache it was started with, whatever
    happened."""
    info = embedded_server_for(uri)
    if info is None:
        raise LoadError(f"the bulk path imports into the embedded server's store, and {uri} is not the embedded "
                        f"server of this SGR_HOME (`sgr neo4j status`); load without --bulk")
    failed: list[BaseException] = []

    def stop() -> None:
        try:
            server.stop()
        except BaseException as exc:  # noqa: BLE001 - handed to wait()
            failed.append(exc)

    stopper = threading.Thread(target=stop, name="sgr-server-stop", daemon=True)
    stopper.start()

    def wait() -> None:
        stopper.join()
        if failed:
            raise failed[0]

    try:
        yield Path(info.home), wait
    finally:
        stopper.join()
        server.start(port=info.port, data_dir=Path(info.home), heap=info.heap, pagecache=info.pagecache,
                     auth=info.auth)

