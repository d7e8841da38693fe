"""Data cannot forge or break the terminal (issue 42 item 4): what comes from the graph, a file or a model is printed
as text: Rich markup escaped, control characters shown as escapes, one value on one line."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sgr.cli import render
from sgr.core.text import visible

HOSTILE = ["[/x]", "a[/b]c.txt", "[link=https://evil.example]click[/link]", "[black on black]hidden[/]",
           "\x1b[2J\x1b[1;31mFAKE ANSWER", "x\rOVERWRITTEN", "\u202eevil\u202c", "line1\nanswer 2: FAKE", "\x9b31m",
           "bell\x07", "nul\x00byte"]


@pytest.fixture()
def screen(monkeypatch):
    """render's stdout and stderr consoles on a fake colour terminal; returns what was written, raw."""
    out = io.StringIO()
    con = Console(file=out, force_terminal=True, color_system="truecolor", width=200)
    monkeypatch.setattr(render, "console", con)
    monkeypatch.setattr(render, "err_console", con)
    return out


def _no_control(text: str) -> None:
    """Only Rich's own styling may emit ESC: strip the SGR sequences Rich writes, then no control character stays."""
    import re

    body = re.sub(r"\x1b\[[0-9;]*m", "", text)
    bad = [c for c in body if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) < 0xA0 or c == "\u202e"]
    assert bad == [], repr(body)


@pytest.mark.parametrize("value", HOSTILE)
def test_query_rows_are_text(screen, value):
    render.show_rows([{value: value, "n": 1}], truncated=False, limit=5)
    _no_control(screen.getvalue())
    assert visible(value).split("\\")[0][:3] in screen.getvalue()


def test_markup_in_data_prints_as_typed(screen):
    render.show_rows([{"a": "[/x]", "b": "[link=https://evil.example]click[/link]"}], truncated=False, limit=5)
    text = screen.getvalue()
    assert "[/x]" in text and "[link=https://evil.example]click[/link]" in text
    assert "\x1b]8;" not in text  # no hyperlink escape


def test_stats_with_a_file_named_like_markup(screen):
    from sgr.graph.stats import GraphStats, RelationCount, SourceInfo

    st = GraphStats(nodes=1, entities=1, cvts=0, relationships=1, relation_types=1,
                    top_relations=[RelationCount("[/r]\x1b[2J", 1)])
    st.sources = [SourceInfo(path="/data/a[/b]c.txt", sha256="0" * 64, triples=1, loaded_at="2026-01-01T00:00:00",
                             format="triples")]
    render.show_stats(st, "bolt://127.0.0.1:7687")
    assert "a[/b]c.txt" in screen.getvalue()
    _no_control(screen.getvalue())


def test_ask_trace_and_error_line(screen):
    from sgr.api import AskResult
    from sgr.core.types import Answer, Prediction, Question

    evil = "\x1b[2J\x1b[1;31mFAKE ANSWER[/]"
    pred = Prediction(question_id="q", answers=[Answer(evil, "m.x", 0.9)], method="neighbors",
                      cypher=["MATCH (n) RETURN n // \x1b[2J"])
    render.show_ask(AskResult(question=Question(id="q", text=f"who {evil}?"), method="neighbors", prediction=pred))
    render.error_line(f"no entity named {evil!s}\nsecond line")
    text = screen.getvalue()
    _no_control(text)
    assert "\\x1b[2J" in text and "FAKE ANSWER[/]" in text
    assert text.count("error:") == 1 and "\\nsecond line" in text


def test_json_output_escapes_what_terminals_act_on(capsys):
    render.show_json({"a": "\x1b[2J", "b": "\x9b31m", "c": "\u202eevil", "d": "x\udcffy"})
    out = capsys.readouterr().out
    _no_control(out)
    assert json.loads(out)["c"] == "\u202eevil"


def test_visible_keeps_ordinary_text():
    assert visible("Beyoncé Knowles — 中文 ok") == "Beyoncé Knowles — 中文 ok"
    assert visible("a\tb\nc", newlines=True) == "a\tb\nc"
    assert visible("a\tb\nc") == "a\\tb\\nc"
    assert visible("x\udcffy") == "x\\xffy"
