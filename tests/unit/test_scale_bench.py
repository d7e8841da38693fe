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


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is read from /proc")
def test_a_child_reports_its_own_peak_not_its_parents():
    """A child started after its parent touched 300 MB (and let it go) reports its own peak; getrusage's
    ru_maxrss in the child would report the parent's (Linux keeps the high-water mark an exec replaces:
    the tx:5M row's 1,097 MB was the bench process's own peak)."""
    held = bytearray(300 * 2**20)
    for i in range(0, len(held), 4096):
        held[i] = 1
    del held
    assert own_peak_rss_mb() >= 300
    out = subprocess.run([sys.executable, "-c", PRINT_PEAKS], cwd=ROOT, capture_output=True, text=True, check=True)
    own, inherited = map(float, out.stdout.split())
    assert inherited >= 300  # what the bench recorded before
    assert 0 < own < 150
