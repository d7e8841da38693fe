"""``sgr scr train`` refuses a step supervision it does not know before it touches Neo4j or the data."""

from __future__ import annotations

from typer.testing import CliRunner

from cli import app
from sgr.core.errors import ConfigError
from sgr.methods.scr.data import SUPERVISION


def test_an_unknown_supervision_is_refused_with_the_known_ones() -> None:
    res = CliRunner().invoke(app, ["scr", "train", "--dataset", "metaqa", "--supervision", "gold-only"])
    assert res.exit_code == ConfigError.exit_code, res.output
    assert "--supervision 'gold-only'" in res.output
    assert all(name in res.output for name in SUPERVISION)


def test_folding_a_bundle_run_needs_the_bundle_it_was_written_from() -> None:
    res = CliRunner().invoke(app, ["scr", "train", "--dataset", "metaqa", "--from-bundle", "returned"])
    assert res.exit_code == ConfigError.exit_code, res.output
    assert "--from-bundle needs --bundle" in res.output
