"""Fault injection: what happens to sgr when the things it depends on die or run out of room.

Each scenario drives the real ``sgr`` command line in subprocesses against an embedded Neo4j of its own
(``SGR_HOME`` in a temp folder, started here), only over 127.0.0.1, with bounded waits:

* ``neo4j-kill-eval``  — SIGKILL the Neo4j JVM while ``sgr eval`` runs: the run must stop with one line and a
  non-zero code; after ``sgr neo4j start`` the same command resumes, ending with every question exactly once;
* ``llm-kill-eval``    — SIGKILL the chat-model server (an OpenAI-compatible endpoint on 127.0.0.1) during
  ``sgr eval --method llm-only``: the same expectations;
* ``load-kill``        — ``kill -9`` the ``sgr load`` process in the middle of a MetaQA slice, rerun: node and
  relationship counts and the graph checksum equal those of a clean load;
* ``eval-during-load`` — ``sgr eval --workers 8`` while the same graph is being reloaded (``--force``): no errors,
  answers identical to the undisturbed run;
* ``full-disk``        — a 1 MiB tmpfs, filled: ``sgr neo4j start`` with ``SGR_HOME`` there and ``sgr eval`` with
  ``--out`` there must fail with one line; after space is freed the run resumes with intact predictions;
* ``unreachable`` / ``wrong-password`` — one line that says what to do, exit code 3;
* ``resource-bombs`` — ``sgr query BOMB --timeout 3`` (in this process, as the console script runs it) for
  expressions that never read the store (``reduce`` over three billion numbers, string and list doubling, string
  appends, huge comprehensions, ``collect`` over a billion rows, a cross product): each must fail with one line
  within 2 s of its timeout (``timeout_overrun_s``: the worst), the server must keep its pid and answer, and a
  query of another session meanwhile must answer (``other_session_s``: its worst latency);
* ``private-store`` — after the fresh start and load, no file under ``SGR_HOME`` is readable by another user
  (``world_readable_files``: read bit for others and every folder down to it enterable by others;
  ``world_read_bit_files``: files and folders with the read bit for others at all).

Usage::

    nice -n 10 .venv/bin/python bench/faults.py            # all scenarios
    .venv/bin/python bench/faults.py --only unreachable --only wrong-password

Writes the ``faults`` part of ``bench/results/hardening.json`` (``summary.faults_tried``,
``summary.faults_recovered``, ``timeout_overrun_s``, ``world_readable_files`` …) through ``bench/record.py`` (the
part keeps this run's provenance) and rewrites ``bench/results/hardening.md`` with both tables.
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
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != BENCH]
RESULTS = ROOT / "bench" / "results"
N_QUESTIONS = 60
KB_LINES = 40_000


@dataclass
class Fault:
    name: str
    recovered: bool
    detail: dict = field(default_factory=dict)
    note: str = ""


def sgr_cmd() -> list[str]:
    """How to run the command line of this checkout (``sgr/cli`` once it is a package, else ``cli.py``)."""
    if (ROOT / "sgr" / "cli" / "__main__.py").exists():
        return [sys.executable, "-m", "sgr.cli"]
    return [sys.executable, "-m", "cli"]


class Bench:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SGR_LLM_"))}
        self.env.update(SGR_HOME=str(work / "home"), PYTHONPATH=str(ROOT), COLUMNS="200", PYTHONUNBUFFERED="1")
        os.environ.update(SGR_HOME=self.env["SGR_HOME"])
        os.environ.pop("NEO4J_URI", None)
        os.environ.pop("NEO4J_PASSWORD", None)
        shared = next(p for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared", Path("/work/shared"))
                      if p.exists()) / "data"
        self.questions = work / "webqsp60.jsonl"
        with open(shared / "webqsp" / "webqsp_mini.jsonl") as src, open(self.questions, "w") as dst:
            for k, line in enumerate(src):
                if k >= N_QUESTIONS:
                    break
                dst.write(line)
        self.ids = [json.loads(ln)["id"] for ln in self.questions.read_text().splitlines() if ln.strip()]
        self.kb = work / "kb40k.txt"
        with open(shared / "metaqa" / "kb.txt") as src, open(self.kb, "w") as dst:
            for k, line in enumerate(src):
                if k >= KB_LINES:
                    break
                dst.write(line)

    def sgr(self, *args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run(sgr_cmd() + [str(a) for a in args], cwd=ROOT, env=env or self.env,
                              capture_output=True, text=True, timeout=timeout)

    def popen(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen(sgr_cmd() + [str(a) for a in args], cwd=ROOT, env=env or self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def start_neo4j(self):  # noqa: ANN201
        from sgr.graph import server

        return server.start(heap="768m", pagecache="128m")

    def neo4j_pid(self) -> int:
        return json.loads((self.work / "home" / "neo4j" / "server.json").read_text())["pid"]

    def store(self):  # noqa: ANN201
        from sgr.graph.store import GraphStore

        return GraphStore.from_settings()

    def eval_args(self, out: Path, method: str = "neighbors", *extra: str) -> list[str]:
        return ["eval", str(self.questions), "--method", method, "--out", str(out), "--no-ceiling", *extra]

    def predictions(self, run: Path) -> tuple[list[str], int]:
        """(ids in predictions.jsonl, lines that do not parse)."""
        ids, bad = [], 0
        path = run / "predictions.jsonl"
        for line in path.read_text().splitlines() if path.exists() else []:
            try:
                ids.append(json.loads(line)["id"])
            except (ValueError, KeyError):
                bad += 1
        return ids, bad

    def complete(self, run: Path) -> dict:
        ids, bad = self.predictions(run)
        return {"lines": len(ids), "unparsable": bad, "missing": len(set(self.ids) - set(ids)),
                "duplicated": len(ids) - len(set(ids))}


def error_text(stderr: str) -> str:
    """The error of a command's stderr (from its first ``error:`` line on), progress bars left out."""
    lines = [ln for ln in stderr.strip().split("\n") if ln.strip()]
    first = next((k for k, ln in enumerate(lines) if ln.startswith("error:")), None)
    return "\n".join(lines[first:] if first is not None else lines[-1:])[:300]


def one_line(stderr: str) -> bool:
    lines = [ln for ln in stderr.strip().split("\n") if ln.strip()]
    first = next((k for k, ln in enumerate(lines) if ln.startswith("error:")), None)
    return first is not None and len(lines) - first == 1 and "Traceback" not in stderr


def wait_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 300) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if path.exists() and len(path.read_text().splitlines()) >= n:
            break
        time.sleep(0.1)
    return len(path.read_text().splitlines()) if path.exists() else 0


def load_hostile():  # noqa: ANN201
    """``bench/hostile.py`` as a module (its graph checksum, scripted model and auth check)."""
    import importlib.util

    if "sgr_bench_hostile" in sys.modules:
        return sys.modules["sgr_bench_hostile"]
    spec = importlib.util.spec_from_file_location("sgr_bench_hostile", BENCH / "hostile.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def counts(b: Bench) -> tuple[int, int, str]:
    with b.store() as st:
        return load_hostile().snapshot(st)


# -- scenarios -------------------------------------------------------------------------------------
def neo4j_kill_eval(b: Bench) -> Fault:
    run = b.work / "run-neo4j-kill"
    proc = b.popen(*b.eval_args(run))
    seen = wait_lines(run / "predictions.jsonl", 5, proc)
    killed = proc.poll() is None
    if killed:
        os.kill(b.neo4j_pid(), signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    first = {"rc": proc.returncode, "one_line": one_line(err), "stderr": error_text(err), "predictions_at_kill": seen}
    b.start_neo4j()
    again = b.sgr(*b.eval_args(run))
    d = {"first": first, "rerun_rc": again.returncode, "rerun_stderr": error_text(again.stderr), **b.complete(run)}
    ok = (killed and first["rc"] != 0 and first["one_line"] and again.returncode == 0 and d["missing"] == 0
          and d["duplicated"] == 0 and d["unparsable"] == 0)
    return Fault("neo4j-kill-eval", ok, d, "" if killed else "the run ended before the kill")


def llm_kill_eval(b: Bench) -> Fault:
    from sgr.graph.server import free_port

    port = free_port()
    serve = [sys.executable, str(BENCH / "faults.py"), "--serve-model", str(port)]
    model = subprocess.Popen(serve, env=b.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(b.env, SGR_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", SGR_LLM_MODEL="scripted",
               SGR_LLM_CONSTRAINT="none", SGR_LLM_LOGPROBS="0", SGR_LLM_CACHE="0", OPENAI_API_KEY="local")
    time.sleep(2)
    run = b.work / "run-llm-kill"
    proc = b.popen(*b.eval_args(run, "llm-only"), env=env)
    seen = wait_lines(run / "predictions.jsonl", 5, proc)
    killed = proc.poll() is None
    model.kill()
    model.wait()
    _, err = proc.communicate(timeout=600)
    first = {"rc": proc.returncode, "one_line": one_line(err), "stderr": error_text(err), "predictions_at_kill": seen}
    model = subprocess.Popen(serve, env=b.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        again = subprocess.run(sgr_cmd() + b.eval_args(run, "llm-only"), cwd=ROOT, env=env, capture_output=True,
                               text=True, timeout=600)
    finally:
        model.kill()
        model.wait()
    ids, _ = b.predictions(run)
    errors = sum(1 for ln in (run / "predictions.jsonl").read_text().splitlines() if json.loads(ln).get("error"))
    d = {"first": first, "rerun_rc": again.returncode, "rerun_stderr": error_text(again.stderr),
         "records_with_error": errors, **b.complete(run)}
    ok = (killed and first["rc"] != 0 and first["one_line"] and again.returncode == 0 and d["missing"] == 0
          and d["duplicated"] == 0 and errors == 0)
    return Fault("llm-kill-eval", ok, d, "" if killed else "the run ended before the kill")


def load_kill(b: Bench) -> Fault:
    with b.store() as st:
        st.clear()
    ref = b.sgr("load", "triples", b.kb)
    reference = counts(b)
    with b.store() as st:
        st.clear()
    proc = b.popen("load", "triples", b.kb, "--batch-size", "2000")
    with b.store() as st:  # kill once the first write transactions are committed, not during parsing
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            if st.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"] > 0:
                break
            time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.communicate()
    partial = counts(b)
    again = b.sgr("load", "triples", b.kb, "--batch-size", "2000")
    final = counts(b)
    d = {"reference_rc": ref.returncode, "reference": reference[:2], "after_kill": partial[:2],
         "rerun_rc": again.returncode, "rerun_stderr": error_text(again.stderr), "final": final[:2],
         "checksum_equal": final[2] == reference[2]}
    ok = killed and ref.returncode == 0 and again.returncode == 0 and final == reference
    return Fault("load-kill", ok, d, "" if killed else "the load ended before its first write was seen")


def eval_during_load(b: Bench) -> Fault:
    """``--workers 8`` while the same graph is reloaded again and again (``--force``: every MERGE takes its locks)."""
    with b.store() as st:
        st.clear()
    b.sgr("load", "freebase", b.questions)
    base = b.work / "run-base"
    r0 = b.sgr(*b.eval_args(base))
    run = b.work / "run-w8"
    ev = b.popen(*b.eval_args(run, "neighbors", "--workers", "8"))
    loads, load_rcs = 0, set()
    while ev.poll() is None and loads < 30:
        load_rcs.add(b.sgr("load", "freebase", b.questions, "--force").returncode)
        loads += 1
    _, err = ev.communicate(timeout=600)

    def answers(path: Path) -> dict:
        out = {}
        for ln in (path / "predictions.jsonl").read_text().splitlines():
            rec = json.loads(ln)
            out[rec["id"]] = (rec.get("error"), json.dumps(rec.get("answers"), sort_keys=True))
        return out

    a0, a1 = answers(base), answers(run)
    diff = sum(a0.get(k) != v for k, v in a1.items())
    errors = sum(1 for v in a1.values() if v[0])
    d = {"base_rc": r0.returncode, "rc": ev.returncode, "stderr": error_text(err), "reloads_during_eval": loads,
         "reload_rcs": sorted(load_rcs), "answers_differing": diff, "errors": errors, **b.complete(run)}
    ok = (r0.returncode == 0 and ev.returncode == 0 and diff == 0 and errors == 0 and d["missing"] == 0
          and load_rcs <= {0} and loads >= 1)
    return Fault("eval-during-load", ok, d, "" if loads >= 1 else "the eval ended before a reload ran")


def full_disk(b: Bench) -> Fault:
    mnt = b.work / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True).returncode:
        return Fault("full-disk", False, {}, "could not mount a tmpfs (needs root)")
    try:
        filler = mnt / "filler"
        with open(filler, "wb", buffering=0) as fh:  # fill it, then give back 12 KiB: room for a few records
            try:
                while True:
                    fh.write(b"\0" * 4096)
            except OSError:
                pass
        with open(filler, "r+b") as fh:
            fh.truncate(max(0, filler.stat().st_size - 12 * 1024))
        env = dict(b.env, SGR_HOME=str(mnt / "home"))
        start = b.sgr("neo4j", "start", env=env, timeout=300)
        run = mnt / "run"
        ev = b.sgr(*b.eval_args(run))
        filler.unlink()
        again = b.sgr(*b.eval_args(run))
        d = {"start_rc": start.returncode, "start_one_line": one_line(start.stderr), "start_stderr": error_text(start.stderr),
             "eval_rc": ev.returncode, "eval_one_line": one_line(ev.stderr), "eval_stderr": error_text(ev.stderr),
             "rerun_rc": again.returncode, **b.complete(run)}
        b.sgr("neo4j", "stop", env=env)
        ok = (start.returncode != 0 and d["start_one_line"] and ev.returncode != 0 and d["eval_one_line"]
              and again.returncode == 0 and d["missing"] == 0 and d["duplicated"] == 0 and d["unparsable"] == 0)
        return Fault("full-disk", ok, d)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def unreachable(b: Bench) -> Fault:
    r = b.sgr("query", "RETURN 1", env=dict(b.env, NEO4J_URI="bolt://127.0.0.1:1"))
    e = b.sgr(*b.eval_args(b.work / "run-unreachable"), env=dict(b.env, NEO4J_URI="bolt://127.0.0.1:1"))
    d = {"query_rc": r.returncode, "query_stderr": error_text(r.stderr), "eval_rc": e.returncode, "eval_stderr": error_text(e.stderr)}
    ok = r.returncode == 3 and one_line(r.stderr) and e.returncode == 3 and one_line(e.stderr) \
        and "sgr neo4j start" in r.stderr
    return Fault("unreachable", ok, d)


def wrong_password(b: Bench) -> Fault:
    env = dict(b.env, NEO4J_PASSWORD="not-the-password")
    r = b.sgr("query", "RETURN 1", env=env)
    e = b.sgr(*b.eval_args(b.work / "run-wrong-password"), env=env)
    d = {"query_rc": r.returncode, "query_stderr": error_text(r.stderr), "eval_rc": e.returncode, "eval_stderr": error_text(e.stderr)}
    ok = r.returncode == 3 and one_line(r.stderr) and e.returncode == 3 and one_line(e.stderr) \
        and "NEO4J_PASSWORD" in r.stderr
    return Fault("wrong-password", ok, d)


#: Expressions that read nothing from the store while they run (Neo4j checks a transaction's termination only on
#: store reads), CPU-bound and memory-bound, plus two that read rows (Neo4j's own checks stop those).
BOMBS = {
    "reduce-sum": "RETURN reduce(s = 0, i IN range(1, 3000000000) | s + i) AS x",
    "string-doubling": "RETURN size(reduce(s = 'x', i IN range(1, 40) | s + s)) AS x",
    "string-doubling-wide": "RETURN size(reduce(s = 'xxxxxxxxxxxxxxxx', i IN range(1, 36) | s + s + s)) AS x",
    "list-doubling": "RETURN reduce(l = [1], i IN range(1, 30) | l + l) AS x",
    "string-append": "RETURN size(reduce(s = '', i IN range(1, 100000000) | s + 'xxxxxxxxxx')) AS x",
    "list-comprehension": "RETURN size([x IN range(1, 2000000000) | x]) AS x",
    "nested-comprehension": "RETURN size([x IN range(1, 50000) | [y IN range(1, 50000) | y]]) AS x",
    "string-split": "RETURN size(split(reduce(s = 'a,', i IN range(1, 30) | s + s), ',')) AS x",
    "collect": "UNWIND range(1, 2000000000) AS i RETURN size(collect(i)) AS x",
    "cross-product": "UNWIND range(1, 100000) AS i UNWIND range(1, 100000) AS j RETURN count(*) AS x",
}
BOMB_TIMEOUT_S = 3.0


def resource_bombs(b: Bench) -> Fault:
    import threading

    hostile = load_hostile()
    pid = b.neo4j_pid()
    rows, worst_other = {}, 0.0
    for name, query in BOMBS.items():
        other: list[float] = []
        stop = threading.Event()

        def poll() -> None:  # another session asks something small while the bomb runs
            with b.store() as st:
                while not stop.is_set():
                    t = time.perf_counter()
                    st.run_generated("RETURN 1 AS one", timeout_s=30)
                    other.append(time.perf_counter() - t)
                    time.sleep(0.25)

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        t0 = time.perf_counter()
        rc, out, err, tb = hostile.run_cli(["query", query, "--timeout", str(BOMB_TIMEOUT_S)])
        took = time.perf_counter() - t0
        stop.set()
        th.join(60)
        with b.store() as st:
            alive = st.run_generated("RETURN 1 AS one", timeout_s=30).rows == [{"one": 1}]
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        rows[name] = {"rc": rc, "seconds": round(took, 2), "overrun_s": round(max(0.0, took - BOMB_TIMEOUT_S), 2),
                      "one_line": len(lines) == 1 and not tb, "message": lines[0][:160] if lines else "",
                      "server_alive": alive and b.neo4j_pid() == pid,
                      "other_session_max_s": round(max(other), 2) if other else None}
        worst_other = max(worst_other, max(other) if other else 0.0)
    overrun = max(r["overrun_s"] for r in rows.values())
    d = {"timeout_s": BOMB_TIMEOUT_S, "timeout_overrun_s": overrun, "other_session_s": round(worst_other, 2),
         "bombs": rows}
    ok = overrun <= 2.0 and all(r["rc"] == 6 and r["one_line"] and r["server_alive"] for r in rows.values())
    return Fault("resource-bombs", ok, d)


def world_readable(home: Path) -> tuple[list[str], list[str]]:
    """(files and folders another user can read: read bit for others and every folder from ``home`` down enterable
    by others; everything with the read bit for others at all), under ``home``."""
    reachable, bit = [], []
    for p in [home, *home.rglob("*")]:
        if p.is_symlink():
            continue
        mode = p.stat().st_mode
        if mode & 0o004:
            bit.append(str(p.relative_to(home)))
            chain = [home, *(q for q in reversed(p.parents) if home in q.parents)] if p != home else []
            if all(d.stat().st_mode & 0o001 for d in chain):
                reachable.append(str(p.relative_to(home)))
    return reachable, bit


def private_store(b: Bench) -> Fault:
    home = b.work / "home"
    reachable, bit = world_readable(home)
    d = {"world_readable_files": len(reachable), "world_read_bit_files": len(bit), "examples": (reachable or bit)[:5],
         "files": sum(1 for _ in home.rglob("*")), "home_mode": oct(home.stat().st_mode & 0o777)}
    return Fault("private-store", not reachable and not bit, d)


SCENARIOS = {"private-store": private_store, "resource-bombs": resource_bombs, "unreachable": unreachable, "wrong-password": wrong_password, "eval-during-load": eval_during_load,
             "neo4j-kill-eval": neo4j_kill_eval, "llm-kill-eval": llm_kill_eval, "load-kill": load_kill,
             "full-disk": full_disk}


def serve_model(port: int) -> None:
    """The chat model of ``llm-kill-eval``: always answers "Jamaican English", a little slowly."""
    m = load_hostile().ScriptedModel(port=port, delay_s=0.3)
    m.script = ["Jamaican English"]
    while True:
        time.sleep(3600)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="run only these (repeatable)")
    ap.add_argument("--serve-model", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.serve_model:
        serve_model(args.serve_model)
        return 0
    work = Path(tempfile.mkdtemp(prefix="sgr-faults-"))
    b = Bench(work)
    b.start_neo4j()  # a fresh SGR_HOME: this is a first start, as `sgr neo4j start` does it
    results: list[Fault] = []
    auth_default = int(load_hostile().auth_required())
    try:
        b.sgr("load", "freebase", b.questions)
        for name in args.only or list(SCENARIOS):
            t0 = time.time()
            try:
                f = SCENARIOS[name](b)
            except Exception as exc:  # noqa: BLE001 - a scenario that breaks the bench is a failed scenario
                f = Fault(name, False, {}, f"bench error: {type(exc).__name__}: {exc}")
            f.detail["seconds"] = round(time.time() - t0, 1)
            results.append(f)
            print(f"{name:<18} {'recovered' if f.recovered else 'NOT RECOVERED'}  {f.note}", flush=True)
            print("   ", json.dumps(f.detail)[:3000], flush=True)
    finally:
        from sgr.graph import server

        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    summary = {"faults_tried": len(results), "faults_recovered": sum(f.recovered for f in results),
               "auth_default": auth_default, **fault_figures(asdict(f) for f in results)}
    print(json.dumps(summary))
    if not args.no_write:
        path = RESULTS / "hardening.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        done = {f.name for f in results}  # a partial rerun (--only) replaces just its scenarios
        faults = [f for f in data.get("faults", []) if f["name"] not in done] + [asdict(f) for f in results]
        summary.update(faults_tried=len(faults), faults_recovered=sum(f["recovered"] for f in faults),
                       **fault_figures(faults))
        load_hostile().write_hardening(data, summary, "faults", {
            "faults": faults, "faults_machine": {"cpus": os.cpu_count(), "load_avg": os.getloadavg()}})
    return 0 if all(f.recovered for f in results) else 1


def fault_figures(faults) -> dict:  # noqa: ANN001
    """The summary figures of the resource-bomb and private-store scenarios, when they ran."""
    out = {}
    for f in faults:
        if f["name"] == "resource-bombs" and f["detail"].get("bombs"):
            out.update(timeout_overrun_s=f["detail"]["timeout_overrun_s"], other_session_s=f["detail"]["other_session_s"],
                       resource_bombs=len(f["detail"]["bombs"]))
        if f["name"] == "private-store" and "world_readable_files" in f["detail"]:
            out.update(world_readable_files=f["detail"]["world_readable_files"],
                       world_read_bit_files=f["detail"]["world_read_bit_files"])
    return out


def write_markdown(data: dict) -> None:
    """``bench/results/hardening.md``: the summary, every fault scenario, and the per-case hostile table."""
    s = data.get("summary", {})
    out = ["# Hardening: hostile inputs and faults", "", "Written by `bench/hostile.py` and `bench/faults.py`.", ""]
    for part, prov in data.get("parts", {}).items():
        out.append(f"- {part}: `{prov.get('command', '')}` at {prov.get('commit', '')}"
                   f"{' (dirty tree)' if prov.get('dirty') else ''}, {prov.get('date', '')}, "
                   f"load {prov.get('machine', {}).get('loadavg')}")
    out += ["", "| figure | value |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in s.items()]
    if data.get("faults"):
        out += ["", "## Faults", "", "| scenario | recovered | details |", "|---|---|---|"]
        for f in data["faults"]:
            detail = json.dumps(f["detail"]).replace("|", "\\|")[:400]
            out.append(f"| {f['name']} | {'yes' if f['recovered'] else 'NO'} | {f['note']} {detail} |")
    if data.get("hostile"):
        out += ["", "## Hostile cases", "", "| id | family | what | exit | expected | ok | write | read | traceback | "
                "forged | admin | code | first line of the error |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for o in data["hostile"]:
            msg = o["message"].replace("|", "\\|")[:120]
            note = o["note"].replace("|", "\\|").replace("\n", " ")[:60]
            out.append(f"| {o['id']} | {o['family']} | {note} | {o['rc']} | {','.join(map(str, o['expected']))} | "
                       f"{'yes' if o['ok'] else 'NO'} | {int(o['wrote'])} | {int(o['file_read'] or o['net_read'])} | "
                       f"{int(o['traceback'])} | {int(o.get('forged', 0))} | {int(o.get('admin_ran', 0))} | "
                       f"{int(o.get('executed', 0))} | {msg} |")
    (RESULTS / "hardening.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
