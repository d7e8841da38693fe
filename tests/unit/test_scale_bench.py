"""bench/scale.py's memory figures: the client's own peak, not the peak of the process that started it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.scale import own_peak_rss_mb

ROOT = Path(__file__).resolve().parents[2]
PRINT_PEAKS = ("import resource; from bench.scale import own_peak_rss_mb; "
               "print(own_peak_rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")


def _touch(mb: int) -> None:
    """Make this process's peak RSS at least ``mb`` MB (the memory is let go again)."""
    held = bytearray(mb * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is read from /proc")
def test_a_child_reports_its_own_peak_not_its_parents():
    """A child started after its parent touched 300 MB (and let it go) reports its own peak; getrusage's
    ru_maxrss in the child would report the parent's (Linux keeps the high-water mark an exec replaces:
    the tx:5M row's 1,097 MB was the bench process's own peak)."""
    _touch(300)
    assert own_peak_rss_mb() >= 300
    out = subprocess.run([sys.executable, "-c", PRINT_PEAKS], cwd=ROOT, capture_output=True, text=True, check=True)
    own, inherited = map(float, out.stdout.split())
    assert inherited >= 300  # what the bench recorded before
    assert 0 < own < 150


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the helpers are read from /proc")
def test_helper_peaks_are_each_ended_helpers_own():
    """A helper's peak is its own (a child touching 100 MB, started by this process after its own 300 MB); a process
    still running when the load ends (the bulk path's restarted server) is no helper."""
    from bench.scale import HelperPeaks

    _touch(300)
    peaks = HelperPeaks(every=0.05)
    peaks.start()
    subprocess.run([sys.executable, "-c", "import time\nb = bytearray(100 * 2**20)\nfor i in range(0, len(b), 4096): "
                    "b[i] = 1\ntime.sleep(1)"], check=True)
    still = subprocess.Popen(["sleep", "30"])
    try:
        subprocess.run(["sleep", "0.5"], check=True)
        found = peaks.stop()
    finally:
        still.kill()
        still.wait()
    python = [h for h in found if h["command"].startswith("python")]
    assert len(python) == 1 and 100 <= python[0]["peak_mb"] < 250
    assert [h["command"] for h in found].count("sleep") == 1  # the ended one, not the one still running
