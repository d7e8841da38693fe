"""Fault injection (placeholder; filled in below)."""

from __future__ import annotations


def write_markdown(data: dict) -> None:
    pass
