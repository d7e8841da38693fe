"""Scale benchmark: Freebase-shaped N-Triples from a deterministic generator, loaded at growing sizes.

    nice -n 10 .venv/bin/python bench/scale.py --sizes 1M,5M,20M --tx-size 5M     # resumable
    .venv/bin/python bench/scale.py --generate-only 1M --out-dir /tmp/sgr-scale     # just the file

Steps (each one's result is saved in ``bench/results/scale.json`` as soon as it ends; a rerun
skips the steps already there, ``--redo STEP`` runs one again):

1. ``generate:<size>``: :func:`generate` writes ``<size>`` lines of Freebase-shaped N-Triples to
   ``--out-dir`` (``/tmp`` by default; written to ``.part`` and renamed, so a killed run leaves no
   half file): MIDs, English names (and a few French ones, which the loader skips), topic entities
   linking to other topics (70% uniform, 30% to a Zipf-ranked set of hubs), a quarter of the facts
   through CVT nodes (MIDs without a name, with a second relation out and a date literal), about
   3,000 relation types under a Zipf law (exponent 1.07), typed literals (int, float, date),
   ``type.object.type`` / ``common.topic.notable_types``, and one malformed line per 100,000.
   Names are a function of the entity's number, so questions and answers are known without the graph.
2. ``bulk:<size>`` and ``tx:<size>``: ``sgr load freebase FILE --bulk`` / ``--no-bulk`` in a child
   process against a fresh embedded server in its own ``SGR_HOME``: wall time, triples/s, the
   child's own peak RSS (the client: ``VmHWM``, :func:`own_peak_rss_mb`; the ``sort``, parse, CSV and
   import-tool processes it starts are reported apart, :class:`HelperPeaks`), the server's heap in use after the
   load and the store's size on disk, and for the
   bulk path the steps (parse, CSV, the importer and its own stages, the server's restart, schema).
   ``admin:<size>``: neo4j-admin's importer alone on the CSV the bulk step wrote (``SGR_IMPORT_KEEP``), into
   a fresh store, with the same settings: the limit beside sgr (``bulk_over_admin_ratio``).
3. ``ask:<size>`` and ``ask:webqsp``: the ``sgr-compiled`` method (no LLM) on ``--questions``
   generated questions over the largest bulk-loaded graph, and on as many WebQSP questions over
   the WebQSP slice: p50/p95 latency per question and Hits@1.
4. ``metaqa``: ``bench/load.py --fresh-server`` (the MetaQA KB against LangChain's
   ``add_graph_documents``) in the same run; its summary is copied here.

Summary keys: ``bulk_20m_seconds``, ``admin_only_20m_seconds``, ``bulk_over_admin_ratio`` (of the largest
bulk size), ``bulk_triples_per_s``, ``tx_5m_triples_per_s``, ``client_peak_rss_mb_20m``, ``ask_p50_ms_20m``,
``ask_p50_ms_small``, ``metaqa_seconds``, ``speedup_vs_langchain``, and beside the timed ones the 1-minute
load average when that step ended (``*_loadavg``); sizes that were not run are ``null``; ``sizes_run`` says
which ran. Written with ``bench/record.py``'s provenance (commit, command, machine and load).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.record import write_result  # noqa: E402

NS = "http://rdf.freebase.com/ns/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RESULTS = ROOT / "bench" / "results" / "scale.json"
SYLLABLES = ["ka", "lo", "mi", "ter", "van", "dor", "sel", "ru", "bel", "ca", "nor", "phi", "gan", "tis", "mor",
             "le", "da", "vin", "so", "ren", "tal", "quo", "ber", "xi", "ful", "han", "ost", "ri", "mel", "cor",
             "ap", "ney", "sto", "wen", "gra", "ul", "fen", "ish", "pal", "zor"]
DOMAINS = ["film", "music", "people", "location", "sports", "book", "tv", "business", "education", "government",
           "award", "medicine", "biology", "religion", "military", "aviation", "architecture", "astronomy",
           "computer", "food", "language", "law", "organization", "royalty", "soccer", "baseball", "olympics",
           "theater", "visual_art", "chemistry", "geography", "time", "transportation", "travel", "fictional_universe",
           "cvg", "comic_books", "opera", "games", "broadcast", "boats", "spaceflight", "rail", "wine", "automotive",
           "celebrities", "martial_arts", "measurement_unit", "meteorology", "internet"]
WORDS = ["actor", "album", "artist", "award", "birth", "capital", "city", "club", "company", "country", "date",
         "director", "event", "founder", "genre", "group", "height", "holder", "language", "leader", "member",
         "nominee", "office", "parent", "place", "position", "producer", "region", "release", "role", "school",
         "season", "series", "spouse", "team", "title", "track", "venue", "winner", "work", "author", "character",
         "contains", "currency", "degree", "designer", "employer", "ethnicity", "influence", "instrument"]
N_RELATIONS = 3000
ZIPF_S = 1.07
HUBS = 2000
CVT_BASE = 1_000_000_000
TYPE_BASE = 2_000_000_000


def size_of(text: str) -> int:
    """``1M`` → 1,000,000; ``250k`` → 250,000."""
    t = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if mult > 1 else t) * mult)


def mid(i: int) -> str:
    alphabet = "0123456789bcdfghjklmnpqrstvwxyz_"
    out = ""
    while True:
        out = alphabet[i % 32] + out
        i //= 32
        if not i:
            return "m.0" + out


def topic_of(entity: str) -> int:
    """The number behind :func:`mid` (its inverse)."""
    alphabet = "0123456789bcdfghjklmnpqrstvwxyz_"
    i = 0
    for ch in entity[3:]:
        i = i * 32 + alphabet.index(ch)
    return i


def word(i: int) -> str:
    n = len(SYLLABLES)
    return (SYLLABLES[i % n] + SYLLABLES[(i // n) % n]).capitalize()


def name_of(topic: int) -> str:
    """The English name of topic ``topic`` (unique: two or three words from its digits)."""
    w = len(SYLLABLES) ** 2
    parts = [word(topic % w), word((topic // w) % w)]
    if topic >= w * w:
        parts.append(word(topic // (w * w)))
    return " ".join(parts)


def relation_names(seed: int) -> tuple[list[str], list[str]]:
    """``N_RELATIONS`` distinct ``domain.type.property`` names in Zipf rank order, and the CVT
    relations (``domain.type.property`` of the second hop) to pair with the CVT-mediated ones."""
    rng = random.Random(seed)
    seen: set[str] = set()
    rels: list[str] = []
    while len(rels) < N_RELATIONS:
        name = f"{rng.choice(DOMAINS)}.{rng.choice(WORDS)}.{rng.choice(WORDS)}"
        if name not in seen:
            seen.add(name)
            rels.append(name)
    second = [f"{r.rsplit('.', 1)[0]}_entry.{rng.choice(WORDS)}" for r in rels]
    return rels, second


def generate(path: Path, lines: int, seed: int = 0, stop_at: int | None = None) -> dict[str, Any]:
    """Write ``lines`` N-Triples lines to ``path`` (module doc, step 1); returns what was written.
    ``stop_at``: stop after that many lines (the same draws as the full file: its beginning)."""
    rng = random.Random(seed)
    rels, second = relation_names(seed)
    cum = []
    total = 0.0
    for rank in range(1, N_RELATIONS + 1):
        total += 1.0 / rank ** ZIPF_S
        cum.append(total)
    hub_cum = []
    total_h = 0.0
    for rank in range(1, HUBS + 1):
        total_h += 1.0 / rank
        hub_cum.append(total_h)
    topics = max(lines // 11, HUBS + 1)  # about 10 lines per topic: every target topic gets written
    facts = {"lines": 0, "triples": 0, "names": 0, "literals": 0, "types": 0, "cvts": 0, "malformed": 0, "topics": 0}
    tmp = path.with_suffix(path.suffix + ".part")
    out: list[str] = []
    n = 0
    cvt = CVT_BASE  # CVT MIDs are numbered far above the topics
    with open(tmp, "w", encoding="utf-8") as fh:
        t = 0
        while n < (stop_at or lines):
            s = f"<{NS}{mid(t)}>"
            k = 1 + int(rng.random() * 9)  # 1..9 facts, mean 5
            for _ in range(k):
                ri = bisect.bisect_left(cum, rng.random() * total)
                tgt = (bisect.bisect_left(hub_cum, rng.random() * total_h) if rng.random() < 0.3
                       else int(rng.random() * topics))
                if ri % 4 == 0:  # a CVT-mediated fact: s -r-> cvt -r2-> target, with a date on the CVT
                    c = f"<{NS}{mid(cvt)}>"
                    cvt += 1
                    out.append(f"{s} <{NS}{rels[ri]}> {c} .\n")
                    out.append(f"{c} <{NS}{second[ri]}> <{NS}{mid(tgt)}> .\n")
                    n += 2
                    facts["triples"] += 2
                    facts["cvts"] += 1
                    if rng.random() < 0.3:
                        out.append(f'{c} <{NS}{rels[ri].rsplit(".", 1)[0]}_entry.from> "{1900 + int(rng.random() * 124)}'
                                   f'-0{1 + int(rng.random() * 9)}-1{int(rng.random() * 9)}"^^<{XSD}date> .\n')
                        n += 1
                        facts["literals"] += 1
                else:
                    out.append(f"{s} <{NS}{rels[ri]}> <{NS}{mid(tgt)}> .\n")
                    n += 1
                    facts["triples"] += 1
            out.append(f'{s} <{NS}type.object.name> "{name_of(t)}"@en .\n')
            facts["names"] += 1
            out.append(f"{s} <{NS}type.object.type> <{NS}{rels[t % 97].rsplit('.', 1)[0]}> .\n")
            n += 2
            facts["types"] += 1
            r = rng.random()
            if r < 0.3:
                out.append(f"{s} <{NS}common.topic.notable_types> <{NS}{mid(TYPE_BASE + t % 500)}> .\n")
                n += 1
                facts["types"] += 1
            if r < 0.05:
                out.append(f'{s} <{NS}type.object.name> "{name_of(t)} (fr)"@fr .\n')
                n += 1
            if r > 0.9:
                out.append(f'{s} <{NS}measurement.{WORDS[t % 50]}.value> "{int(r * 1e6)}"^^<{XSD}integer> .\n')
                out.append(f'{s} <{NS}measurement.{WORDS[t % 50]}.ratio> "{r:.4f}"^^<{XSD}double> .\n')
                n += 2
                facts["literals"] += 2
            if n // 100_000 > (n - 12) // 100_000 and n > 12:
                out.append(f"<{NS}{mid(t)}> broken line without a predicate\n")
                n += 1
                facts["malformed"] += 1
            t += 1
            if len(out) >= 100_000:
                fh.write("".join(out))
                out.clear()
        fh.write("".join(out))
    facts["lines"] = n
    facts["topics"] = t
    tmp.replace(path)
    return facts


def generated_file(path: Path, lines: int, seed: int = 0) -> dict[str, Any]:
    """:func:`generate`, unless ``path`` was already written with these arguments (its ``.json`` sidecar says)."""
    sidecar = path.with_suffix(".json")
    if path.exists() and sidecar.exists():
        facts = json.loads(sidecar.read_text())
        if facts.get("args") == [lines, seed]:
            return facts
    facts = {**generate(path, lines, seed), "args": [lines, seed]}
    sidecar.write_text(json.dumps(facts))
    return facts


def generated_questions(count: int, lines: int, seed: int = 0) -> list[dict[str, Any]]:
    """Questions over a generated file: the name of a topic, a direct (non-CVT) relation of it, and
    its answers, found by replaying the generator's draws for the first topics (no graph needed)."""
    path = Path(tempfile.mkdtemp(prefix="sgr-scale-q-")) / "head.nt"
    facts = generate(path, lines, seed, stop_at=min(lines, max(count * 60, 20_000)))  # the file's first topics
    topics = max(lines // 11, HUBS + 1)
    found: dict[str, dict[str, list[str]]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split(" ", 2)
            if len(parts) < 3 or not parts[2].startswith("<"):
                continue
            s, p, o = parts[0][len(NS) + 1:-1], parts[1][len(NS) + 1:-1], parts[2][len(NS) + 1:-4]
            if p.startswith(("type.", "common.")) or "_entry." in p:
                continue
            found.setdefault(s, {}).setdefault(p, []).append(o)
    shutil.rmtree(path.parent, ignore_errors=True)
    rng = random.Random(seed + 1)
    subjects = sorted(s for s in found if topic_of(s) < facts["topics"])
    out = []
    for s in rng.sample(subjects, len(subjects)):
        rel, objs = sorted(found[s].items())[0]
        answers = sorted({name_of(topic_of(o)) for o in objs if topic_of(o) < topics})
        if not answers:
            continue  # a CVT-mediated relation: its direct objects have no name
        words = rel.split(".")
        out.append({"id": f"gen-{s}", "question": f"what is the {words[-1].replace('_', ' ')} {words[-2]} "
                    f"of {name_of(topic_of(s))}?", "topic": name_of(topic_of(s)), "answers": answers, "relation": rel})
        if len(out) >= count:
            break
    return out


# -- measuring -------------------------------------------------------------------------------
def _status_mb(pid: int | str, key: str) -> float | None:
    """A ``kB`` line of ``/proc/<pid>/status`` (``VmHWM``, ``VmRSS``) in MB; None where there is none."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def own_peak_rss_mb() -> float:
    """This process's own peak RSS since it started (``VmHWM``). Not ``getrusage``'s ``ru_maxrss``: Linux keeps in it
    the high-water mark of the memory an exec replaces, and ``subprocess`` starts a child by vfork and exec, so a
    child's ``ru_maxrss`` is at least its parent's peak (the ``tx:5M`` row of 2026-11-27 recorded 1,097 MB so, its
    child started after the ``ask`` step had run in the bench's own process; that load alone peaks at 322 MB)."""
    import resource

    hwm = _status_mb("self", "VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class HelperPeaks(threading.Thread):
    """The peak RSS (``VmHWM``) of each process this one starts, directly or not (parse and CSV helpers, ``sort``,
    the importer's JVM), read from ``/proc`` every ``every`` seconds while the load runs (:meth:`stop`). A helper
    that lives less than ``every`` may be missed."""

    def __init__(self, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.every = every
        self.t0 = time.perf_counter()
        self.seen: dict[str, dict[str, Any]] = {}  # pid -> {"command", "started_s", "peak_mb"}
        self._done = threading.Event()

    def _descendants(self) -> list[str]:
        children: dict[str, list[str]] = {}
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/stat") as fh:
                        ppid = fh.read().rsplit(")", 1)[1].split()[1]
                except (OSError, IndexError):
                    continue
                children.setdefault(ppid, []).append(entry.name)
        found, todo = [], [str(os.getpid())]
        while todo:
            kids = children.get(todo.pop(), [])
            found += kids
            todo += kids
        return found

    def run(self) -> None:
        while not self._done.wait(self.every):
            for pid in self._descendants():
                hwm = _status_mb(pid, "VmHWM")
                try:
                    command = Path(f"/proc/{pid}/comm").read_text().strip()
                except OSError:
                    continue
                if hwm is not None:
                    seen = self.seen.setdefault(pid, {"command": command, "peak_mb": 0.0,
                                                      "started_s": round(time.perf_counter() - self.t0, 1)})
                    if seen["command"] != command:  # it exec'd since (sort): its own memory starts again
                        seen["command"], seen["peak_mb"] = command, 0.0
                    seen["peak_mb"] = round(max(seen["peak_mb"], hwm), 1)

    def stop(self) -> list[dict[str, Any]]:
        """Each process seen that has ended (the bulk path's restarted server, which outlives the load, is no
        helper), in the order they were first seen."""
        self._done.set()
        self.join()
        alive = set(self._descendants())
        return sorted((h for pid, h in self.seen.items() if pid not in alive), key=lambda h: h["started_s"])


def child_load(path: str, bulk: bool) -> None:
    """Run in a child process: load ``path`` and print a JSON line with the figures (module doc, step 2)."""
    import resource

    from loaders.api import LoadProgress, load_files
    from sgr.graph.store import GraphStore

    class Notices(LoadProgress):
        def notice(self, message: str) -> None:
            print(message, file=sys.stderr, flush=True)

    helpers = HelperPeaks()
    helpers.start()
    t0 = time.perf_counter()
    with GraphStore(os.environ["NEO4J_URI"]) as store:
        report = load_files(store, [path], bulk=bulk, max_errors=1_000_000, progress=Notices())
    wall = time.perf_counter() - t0
    helper_peaks = helpers.stop()
    f = report.files[0]
    print(json.dumps({
        "seconds": wall, "triples": f.triples, "triples_per_s": f.triples / wall, "entities": f.entities,
        "cvts": f.cvts, "literals": f.literals, "malformed": f.malformed_count, "parse_seconds": f.parse_seconds,
        "write_seconds": f.write_seconds, "bulk": report.to_dict()["bulk"],
        "client_peak_rss_mb": own_peak_rss_mb(),
        # each helper's own peak (sampled, with its command and when it was first seen); the largest of them
        "helpers": helper_peaks,
        "helpers_peak_rss_mb": max((h["peak_mb"] for h in helper_peaks), default=None),
        # CPU seconds (user + system): the client, and the processes it waited for (parse and CSV helpers,
        # sort, the importer); less moved by other load on a shared machine than wall time
        "client_cpu_seconds": _cpu(resource.getrusage(resource.RUSAGE_SELF)),
        "helpers_cpu_seconds": _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)),
    }))


def _cpu(usage: Any) -> float:
    return usage.ru_utime + usage.ru_stime


def server_figures(uri: str, home: Path) -> dict[str, Any]:
    """Heap in use (JMX) and the store's size on disk."""
    from sgr.graph.store import GraphStore

    heap = None
    with GraphStore(uri) as store:
        try:
            # the operator's own driver session: sgr's read path allows only the procedures sgr itself calls
            rows, _, _ = store._driver.execute_query(  # noqa: SLF001
                'CALL dbms.queryJmx("java.lang:type=Memory") YIELD attributes '
                'RETURN attributes.HeapMemoryUsage.value.properties.used AS used', routing_="r")
            heap = rows[0]["used"] / 2**20 if rows and rows[0]["used"] is not None else None
        except Exception as exc:  # noqa: BLE001 - JMX may be unavailable; the figure is then null
            print(f"  (server heap not measured: {exc})", file=sys.stderr)
    db = home / "data" / "databases" / "neo4j"
    size = sum(p.stat().st_size for p in db.rglob("*") if p.is_file()) if db.exists() else 0
    return {"server_heap_used_mb": heap, "store_mb": size / 2**20}


def measure_load(path: Path, bulk: bool, home: Path, keep: bool, csv_dir: Path | None = None) -> dict[str, Any]:
    """A fresh embedded server in ``home``, ``sgr load`` in a child process, the server's figures.
    ``csv_dir``: where the bulk path leaves its import CSV (for the ``admin`` step)."""
    from sgr.graph import server

    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ["SGR_HOME"] = str(home)
    info = server.start(heap=os.environ.get("SGR_BENCH_HEAP", "2g"), pagecache="1g")
    try:
        env = {**os.environ, "NEO4J_URI": info.uri, "PYTHONPATH": str(ROOT)}
        if csv_dir is not None:
            shutil.rmtree(csv_dir, ignore_errors=True)
            env["SGR_IMPORT_KEEP"] = str(csv_dir)
        proc = subprocess.run([sys.executable, __file__, "--child-load", str(path)] + (["--bulk"] if bulk else []),
                              env=env, capture_output=True, text=True)
        sys.stderr.write(proc.stderr[-2000:])
        if proc.returncode != 0:
            raise SystemExit(f"load of {path} failed: {proc.stderr.strip()[-800:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result.update(server_figures(info.uri, Path(info.home)))
        return result
    finally:
        if not keep:
            server.stop()
            shutil.rmtree(home, ignore_errors=True)


def measure_admin(csv_dir: Path, home: Path) -> dict[str, Any]:
    """neo4j-admin's importer alone on the CSV in ``csv_dir`` (its ``import.json``), into a fresh store under
    ``home``, with the settings the bulk path uses; the CSV is removed afterwards."""
    from sgr.graph.bulk import run_import

    spec = json.loads((csv_dir / "import.json").read_text())
    shutil.rmtree(home, ignore_errors=True)
    (home / "dbms").mkdir(parents=True)
    os.environ["SGR_HOME"] = str(home)
    load0 = os.getloadavg()[0]
    try:
        summary = run_import(home / "dbms", spec["nodes"], spec["relationships"], home / "import",
                             multiline=spec["multiline"], id_type=spec["id_type"])
    finally:
        shutil.rmtree(csv_dir, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    return {"seconds": summary.seconds, "cpu_seconds": summary.cpu_seconds, "nodes": summary.nodes,
            "relationships": summary.relationships, "id_type": spec["id_type"], "stages": summary.stages,
            "summary": summary.line(),
            "load_average_before": load0}


def measure_ask(questions: list[dict[str, Any]], uri: str) -> dict[str, Any]:
    """``sgr-compiled`` on each question: latency percentiles and Hits@1."""
    from sgr.core.text import normalize, normalize_set
    from sgr.core.types import Question
    from sgr.graph.store import GraphStore
    from sgr.methods.base import MethodContext
    from sgr.methods.registry import create_method

    lat, hits, errors = [], 0, 0
    with GraphStore(uri) as store:
        method = create_method("sgr-compiled", MethodContext(store=store, options={}))
        for q in questions:
            question = Question(id=q["id"], text=q["question"], topic_entities=[q["topic"]], answers=q["answers"])
            t0 = time.perf_counter()
            pred = method.answer(question)
            lat.append((time.perf_counter() - t0) * 1000)
            errors += bool(pred.error and not pred.answers)
            hits += bool(pred.answers) and normalize(pred.answers[0].text) in normalize_set(q["answers"])
    lat_sorted = sorted(lat)
    return {"questions": len(questions), "p50_ms": statistics.median(lat),
            "p95_ms": lat_sorted[min(len(lat) - 1, int(0.95 * len(lat)))], "mean_ms": statistics.mean(lat),
            "hits1": hits / len(questions) if questions else None, "errors": errors,
            "first_ms": lat[0] if lat else None}


def webqsp_questions(count: int) -> list[dict[str, Any]]:
    from sgr.datasets import load_dataset

    ds = load_dataset("webqsp", limit=count)
    return [{"id": q.id, "question": q.text, "topic": (q.topic_entities or [""])[0], "answers": q.answers}
            for q in ds.questions if q.topic_entities]


# -- the run ---------------------------------------------------------------------------------
def load_results(path: Path) -> dict[str, Any]:
    if path.exists():
        return json.loads(path.read_text())
    return {"steps": {}}


def save(results: dict[str, Any], path: Path) -> None:
    results["summary"] = summarize(results["steps"])
    write_result(path, results)


def summarize(steps: dict[str, Any]) -> dict[str, Any]:
    def get(step: str, key: str) -> Any:
        return steps.get(step, {}).get(key)

    def load(step: str) -> Any:
        after = get(step, "load_average_after")
        return round(after[0], 2) if after else None

    bulk_sizes = sorted((k.split(":")[1] for k in steps if k.startswith("bulk:")), key=size_of)
    largest = bulk_sizes[-1] if bulk_sizes else None
    metaqa = steps.get("metaqa", {})
    bulk_big, admin_big = (get(f"bulk:{largest}", "seconds"), get(f"admin:{largest}", "seconds")) if largest else (None, None)
    return {
        "bulk_20m_seconds": get("bulk:20M", "seconds"),
        "bulk_20m_loadavg": load("bulk:20M"),
        "admin_only_20m_seconds": get("admin:20M", "seconds"),
        "admin_only_20m_loadavg": load("admin:20M"),
        "bulk_over_admin_ratio": bulk_big / admin_big if bulk_big and admin_big else None,
        "bulk_over_admin_size": largest if bulk_big and admin_big else None,
        "bulk_triples_per_s": get(f"bulk:{largest}", "triples_per_s") if largest else None,
        "bulk_largest_size_lines": size_of(largest) if largest else None,
        "tx_5m_triples_per_s": get("tx:5M", "triples_per_s"),
        "tx_5m_loadavg": load("tx:5M"),
        "client_peak_rss_mb_20m": get("bulk:20M", "client_peak_rss_mb"),
        "client_peak_rss_mb_largest": get(f"bulk:{largest}", "client_peak_rss_mb") if largest else None,
        "ask_p50_ms_20m": get("ask:20M", "p50_ms"),
        "ask_p50_ms_largest": get(f"ask:{largest}", "p50_ms") if largest else None,
        "ask_p50_ms_small": get("ask:webqsp", "p50_ms"),
        "metaqa_seconds": metaqa.get("metaqa_seconds"),
        "speedup_vs_langchain": metaqa.get("speedup_vs_langchain"),
        "metaqa_loadavg": load("metaqa"),
        "sizes_run": sorted({k.split(":")[1] for k in steps if k.split(":")[0] in ("bulk", "tx")}, key=size_of),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1M,5M,20M", help="bulk-load sizes, in lines (k/M suffixes)")
    ap.add_argument("--tx-size", default="5M", help="size loaded through the transactional path ('' for none)")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", type=Path, default=Path(tempfile.gettempdir()) / "sgr-scale")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--redo", action="append", default=[], help="run STEP again (e.g. bulk:1M)")
    ap.add_argument("--skip", action="append", default=[], help="leave STEP out (e.g. metaqa)")
    ap.add_argument("--generate-only", help="write one generated file of this size and stop")
    ap.add_argument("--child-load", help=argparse.SUPPRESS)
    ap.add_argument("--bulk", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_load:
        child_load(args.child_load, args.bulk)
        return {}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.generate_only:
        print(generated_file(args.out_dir / f"fb-{args.generate_only}.nt", size_of(args.generate_only), args.seed))
        return {}

    results = load_results(args.results)
    steps = results["steps"]
    results["machine"] = {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
                          "note": "shared 2-core machine; other engineers' jobs ran at the same time"}

    def step(name: str, fn: Any) -> Any:
        if name in args.skip:
            return steps.get(name)
        if name in steps and name not in args.redo:
            print(f"{name}: done earlier, skipped (--redo {name} runs it again)")
            return steps[name]
        print(f"{name} … (load average {os.getloadavg()[0]:.2f})", flush=True)
        t0 = time.time()
        load0 = os.getloadavg()
        value = fn()
        value.setdefault("load_average_before", load0)
        value["load_average_after"] = os.getloadavg()
        value["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        steps[name] = value
        save(results, args.results)
        print(f"{name}: {time.time() - t0:.0f} s", flush=True)
        return value

    def file_of(size: str) -> Path:
        path = args.out_dir / f"fb-{size}.nt"
        step(f"generate:{size}", lambda: {**generated_file(path, size_of(size), args.seed), "path": str(path)})
        return path

    sizes = [s for s in args.sizes.split(",") if s]
    largest = max(sizes, key=size_of) if sizes else None
    for size in sizes:
        path = file_of(size)
        home = args.out_dir / f"home-bulk-{size}"
        keep = size == largest and f"ask:{size}" not in steps and f"ask:{size}" not in args.skip
        csv_dir = args.out_dir / f"csv-{size}"
        step(f"bulk:{size}", lambda: measure_load(path, True, home, keep=keep, csv_dir=csv_dir))
        if (csv_dir / "import.json").exists():  # the bulk step just ran: the importer alone on its CSV
            args.redo.append(f"admin:{size}")
            step(f"admin:{size}", lambda: measure_admin(csv_dir, args.out_dir / f"home-admin-{size}"))
        if size == largest:
            def ask_generated() -> dict[str, Any]:
                from sgr.graph import server

                os.environ["SGR_HOME"] = str(home)
                info = server.status() or server.start(data_dir=home / "neo4j" / "dbms", heap="2g", pagecache="1g")
                try:
                    from sgr.graph.store import GraphStore

                    with GraphStore(info.uri) as store:  # the current code's schema (a graph loaded earlier may lack an index)
                        store.ensure_schema()
                    qs = generated_questions(args.questions, size_of(size), args.seed)
                    return {**measure_ask(qs, info.uri), "graph": f"bulk:{size}"}
                finally:
                    server.stop()
            step(f"ask:{size}", ask_generated)
    if args.tx_size:
        path = file_of(args.tx_size)
        step(f"tx:{args.tx_size}", lambda: measure_load(path, False, args.out_dir / "home-tx", keep=False))

    def ask_webqsp() -> dict[str, Any]:
        from loaders.api import load_files
        from sgr.datasets import shared_data_dir
        from sgr.graph import server
        from sgr.graph.store import GraphStore

        home = args.out_dir / "home-webqsp"
        shutil.rmtree(home, ignore_errors=True)
        os.environ["SGR_HOME"] = str(home)
        info = server.start(heap="1g", pagecache="256m")
        try:
            with GraphStore(info.uri) as store:
                load_files(store, [shared_data_dir() / "webqsp" / "webqsp_mini.jsonl"])
            return {**measure_ask(webqsp_questions(args.questions), info.uri), "graph": "webqsp_mini.jsonl"}
        finally:
            server.stop()
            shutil.rmtree(home, ignore_errors=True)
    step("ask:webqsp", ask_webqsp)

    def metaqa() -> dict[str, Any]:
        sys.path.insert(0, str(ROOT / "bench"))
        import load as load_bench

        out = ROOT / "bench" / "results" / "load.json"
        return load_bench.main(["--fresh-server", "--out", str(out)])["summary"]
    step("metaqa", metaqa)
    save(results, args.results)
    print_table(results)
    return results


def print_table(results: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="sgr at scale (bench/results/scale.json)")
    for col in ("step", "lines", "triples", "seconds", "triples/s", "client RSS MB", "heap MB", "store MB"):
        t.add_column(col, justify="right")
    for name, v in results["steps"].items():
        if name.startswith(("bulk:", "tx:")):
            t.add_row(name, f"{size_of(name.split(':')[1]):,}", f"{v['triples']:,}", f"{v['seconds']:.1f}",
                      f"{v['triples_per_s']:,.0f}", f"{v['client_peak_rss_mb']:.0f}",
                      f"{v['server_heap_used_mb'] or 0:.0f}", f"{v['store_mb']:.0f}")
    Console().print(t)
    for name, v in results["steps"].items():
        if name.startswith("ask:"):
            print(f"{name}: sgr-compiled p50 {v['p50_ms']:.0f} ms, p95 {v['p95_ms']:.0f} ms, "
                  f"Hits@1 {v['hits1']:.3f} on {v['questions']} questions")
    print(json.dumps(results["summary"], indent=2))


if __name__ == "__main__":
    main()
