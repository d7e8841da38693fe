"""Start, stop and inspect the embedded Neo4j 5.26 that ``java/`` builds (no Docker needed).

``java/pom.xml`` resolves Neo4j Community, its Bolt server and APOC from Maven Central; the
launcher serves Bolt on 127.0.0.1. State (pid, port, log, store folder) is kept in
``SGR_HOME/neo4j/server.json`` so any later ``sgr`` command finds the running server.

Locked down by default (see ``docs/security.md``):

* authentication is on: the first start generates a random password into ``SGR_HOME/neo4j/password``
  (mode 0600), which :class:`sgr.core.config.Neo4jSettings` hands to every sgr command; ``NEO4J_PASSWORD``
  set at start replaces it; ``start(auth=False)`` (``sgr neo4j start --no-auth``) is the explicit opt-out;
* Cypher cannot read files or the network: ``LOAD CSV`` may not use file URLs, its import root is the empty
  folder ``SGR_HOME/neo4j/import``, every IP address is blocked for Cypher URL access;
* only the plugin procedures in :data:`PROCEDURE_ALLOWLIST` are loaded (APOC's load/import/export are not).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from sgr.core.config import (Neo4jSettings, PathSettings, java_dir, neo4j_password_file, private_dir,
                             read_neo4j_password, read_settings, sgr_home)
from sgr.core.errors import ConfigError, Neo4jServerError

READY_MARK = "SGR-NEO4J-READY"
ERROR_MARK = "SGR-NEO4J-ERROR"
#: Plugin procedures the embedded server loads (Neo4j's ``dbms.security.procedures.allowlist``): only
#: what sgr calls. Built-in ``db.*`` procedures are always there; every other APOC procedure stays unloaded.
PROCEDURE_ALLOWLIST = ("apoc.meta.stats",)
NO_AUTH_WARNING = ("authentication is OFF (--no-auth): any local process can read or wipe the graph "
                   "over Bolt; restart without --no-auth to turn it back on")
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]


@dataclass
class ServerInfo:
    pid: int
    port: int
    uri: str
    home: str
    log: str
    started_at: float
    browser_url: str | None = None
    browser_pid: int | None = None
    auth: bool = True
    heap: str = "1g"
    pagecache: str = "512m"


def state_dir() -> Path:
    """``SGR_HOME/neo4j``: the server's state, log, password, import folder and store (private, mode 0700)."""
    return private_dir(sgr_home() / "neo4j")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (mode 0600, also when the file was there before)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def make_private(root: Path) -> int:
    """Folders under ``root`` to 0700 and files to 0600 (a store written by an earlier sgr was world-readable);
    returns how many modes changed. The server itself runs with umask 077, so what it writes is private."""
    changed = 0
    for path in [root, *root.rglob("*")]:
        try:
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid():
                continue
            want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
            if stat.S_IMODE(st.st_mode) & 0o077:
                os.chmod(path, stat.S_IMODE(st.st_mode) & want)
                changed += 1
        except OSError:
            continue
    return changed


def state_file() -> Path:
    return state_dir() / "server.json"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _require(tool: str, hint: str) -> str:
    path = shutil.which(tool)
    if not path:
        raise Neo4jServerError(f"`{tool}` was not found on PATH: {hint}")
    return path


def build(quiet: bool = True) -> Path:
    """Resolve Neo4j from Maven Central and build the launcher if it is not built yet."""
    jdir = java_dir()
    jar = jdir / "target" / "sgr-neo4j-launcher.jar"
    pom = jdir / "pom.xml"
    if not pom.exists():
        raise Neo4jServerError(f"no launcher sources at {jdir} (set SGR_JAVA_DIR to the checkout's java/ folder)")
    lib = jdir / "target" / "lib"
    sources = [pom, *(jdir / "src").rglob("*.java")]
    if jar.exists() and lib.is_dir() and jar.stat().st_mtime >= max(p.stat().st_mtime for p in sources):
        return jar
    _require("java", "install a Java 17 runtime (e.g. `apt-get install openjdk-17-jre-headless`)")
    mvn = _require("mvn", "install Maven (e.g. `apt-get install maven`) so sgr can fetch Neo4j from Maven Central")
    cmd = [mvn, "-B", "-f", str(pom), "package", "-DskipTests"] + (["-q"] if quiet else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise Neo4jServerError("building the Neo4j launcher with Maven failed (is Maven Central reachable?): "
                               + " | ".join(tail))
    return jar


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child counts as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return True


def read_state() -> ServerInfo | None:
    path = state_file()
    if not path.exists():
        return None
    try:
        info = ServerInfo(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    return info if _pid_alive(info.pid) else None


def _bolt_ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def password_file() -> Path:
    """The embedded server's password file, created with a random password (mode 0600) on first use.

    ``NEO4J_PASSWORD``, when set, is written there instead, so the server and every later sgr
    command agree on it.
    """
    path = neo4j_password_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    wanted = read_settings(Neo4jSettings).password
    if wanted is not None and len(wanted) < 8:
        raise ConfigError("NEO4J_PASSWORD must be at least 8 characters (Neo4j's minimum): "
                          "unset it to use a generated password")
    if wanted is None and read_neo4j_password() is not None:
        os.chmod(path, 0o600)
        return path
    secret = wanted if wanted is not None else secrets.token_urlsafe(24)
    write_private(path, secret + "\n")
    return path


#: Deadline of a transaction that brings none of its own (sgr's loads and trusted reads, Neo4j Browser); generated
#: queries carry theirs (``--timeout``, ``NEO4J_QUERY_TIMEOUT_S``).
DEFAULT_TRANSACTION_TIMEOUT_S = 600
#: Share of the JVM heap one transaction may hold (``db.memory.transaction.max``), and all of them together
#: (``dbms.memory.transaction.total.max``): one query cannot take the heap the others need.
TRANSACTION_MEMORY_SHARE = 0.4
TRANSACTION_MEMORY_TOTAL_SHARE = 0.7
#: How long past its deadline a transaction may keep evaluating Cypher before the launcher stops its thread
#: (``java/…/QueryReaper.java``), and how full the old generation may stay after a collection before the launcher
#: stops the query that allocates the most (expression values such as doubled strings escape the memory limits).
REAP_GRACE_MS = 500
REAP_HEAP_SHARE = 0.85
_UNITS = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def size_bytes(size: str) -> int:
    """``1g`` / ``768m`` / ``1048576`` (the JVM's -Xmx forms) as bytes; ConfigError for anything else."""
    text = str(size).strip().lower()
    unit = _UNITS.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in _UNITS else text
    if not digits.isdigit() or int(digits) == 0:
        raise ConfigError(f"bad memory size {size!r}: use a whole number with k, m or g (e.g. 1g, 768m)")
    return int(digits) * unit


def limit_flags(heap: str) -> list[str]:
    """The launcher flags of the transaction deadline, the memory limits (from the heap) and the reaper."""
    total = size_bytes(heap)
    return ["--transaction-timeout", str(DEFAULT_TRANSACTION_TIMEOUT_S),
            "--transaction-memory", str(int(total * TRANSACTION_MEMORY_SHARE)),
            "--transaction-memory-total", str(int(total * TRANSACTION_MEMORY_TOTAL_SHARE)),
            "--reap-grace-ms", str(REAP_GRACE_MS), "--reap-heap-share", str(REAP_HEAP_SHARE)]


def import_dir() -> Path:
    """The server's ``LOAD CSV`` import root: an empty folder (file URLs are refused anyway)."""
    return private_dir(state_dir() / "import")


def start(port: int | None = None, data_dir: Path | None = None, heap: str = "1g",
          pagecache: str = "512m", wait_s: float = 180.0, auth: bool = True) -> ServerInfo:
    """Start the embedded Neo4j (or return the one already running) and wait until Bolt answers.

    ``auth=False`` starts it without authentication (say so to the user: :data:`NO_AUTH_WARNING`).
    """
    try:
        running = read_state()
        if running:
            return running
        return _start(port, data_dir, heap, pagecache, wait_s, auth)
    except OSError as exc:
        raise Neo4jServerError(
            f"cannot write under {read_settings(PathSettings).home or '~/.sgr'} ({exc.strerror or exc}: {exc.filename or ''}): "
            "free some space "
            "or point SGR_HOME at a writable folder with room") from exc


def _start(port: int | None, data_dir: Path | None, heap: str, pagecache: str, wait_s: float,
           auth: bool) -> ServerInfo:
    java = _require("java", "install a Java 17 runtime (e.g. `apt-get install openjdk-17-jre-headless`)")
    jar = build()
    target = jar.parent
    home = private_dir(Path(data_dir) if data_dir else state_dir() / "dbms")
    make_private(home)
    port = port or free_port()
    if _bolt_ready(port):
        raise Neo4jServerError(f"port {port} is already in use: pick another with --port")
    log = state_dir() / "neo4j.log"
    classpath = f"{jar}:{target / 'lib'}/*"
    cmd = [java, f"-Xms{heap}", f"-Xmx{heap}", *JVM_FLAGS, "-cp", classpath, "sgr.launcher.Launcher",
           "--home", str(home), "--port", str(port), "--plugins", str(target / "plugins"),
           "--import-dir", str(import_dir()), "--procedures", ",".join(PROCEDURE_ALLOWLIST),
           "--pagecache", pagecache, *limit_flags(heap)]
    cmd += ["--password-file", str(password_file())] if auth else ["--no-auth"]
    write_private(log, "")
    with open(log, "w") as fh:  # umask 077: the store, transaction logs and system database are the owner's only
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, umask=0o077)
    info = ServerInfo(pid=proc.pid, port=port, uri=f"bolt://127.0.0.1:{port}", home=str(home),
                      log=str(log), started_at=time.time(), auth=auth, heap=heap, pagecache=pagecache)
    deadline = time.time() + wait_s
    while time.time() < deadline:
        if proc.poll() is not None:
            text = log.read_text(errors="replace")
            own = [ln.split(ERROR_MARK, 1)[1].strip() for ln in text.splitlines() if ERROR_MARK in ln]
            if own:
                raise Neo4jServerError(f"Neo4j did not start: {own[-1]} (log {log})")
            tail = text.strip().splitlines()[-8:]
            raise Neo4jServerError(f"Neo4j exited during start-up (code {proc.returncode}); log {log}: "
                                   + " | ".join(tail))
        if READY_MARK in log.read_text(errors="replace") and _bolt_ready(port):
            write_private(state_file(), json.dumps(asdict(info), indent=2))
            return info
        time.sleep(0.5)
    proc.terminate()
    raise Neo4jServerError(f"Neo4j did not answer on port {port} within {wait_s:.0f}s; see {log}")


def stop(timeout_s: float = 60.0) -> bool:
    """Stop the embedded Neo4j cleanly (SIGTERM, then SIGKILL). Returns False if none was running."""
    info = read_state()
    if info is None:
        state_file().unlink(missing_ok=True)
        return False
    for pid in (info.browser_pid, info.pid):
        if pid and _pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout_s
    while time.time() < deadline and _pid_alive(info.pid):
        time.sleep(0.2)
    if _pid_alive(info.pid):
        os.kill(info.pid, signal.SIGKILL)
    state_file().unlink(missing_ok=True)
    return True


def update_state(**fields: object) -> None:
    """Record extra facts about the running server (e.g. the Browser URL)."""
    info = read_state()
    if info is None:
        return
    data = asdict(info)
    data.update(fields)
    write_private(state_file(), json.dumps(data, indent=2))


def status() -> ServerInfo | None:
    """The running embedded server, or None."""
    return read_state()
