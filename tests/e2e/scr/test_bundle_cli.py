"""``sgr scr train --bundle`` through a real Neo4j: the CLI cuts the G_q of a question file's training split from
the MetaQA slice into a bundle, the bundle trains "there" (here, on the CPU), and ``--from-bundle`` folds what came
back into a checkpoint that is recorded as the default and answers with walks that exist in Neo4j."""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from cli import app
from sgr.methods.registry import MethodContext, create_method
from sgr.methods.scr import bundle as sb
from sgr.methods.scr import train as scr_train

from .conftest import slice_questions

pytestmark = pytest.mark.slow


def test_a_bundle_written_by_the_cli_trains_elsewhere_and_folds_back(metaqa_graph, shared_data, neo4j_uri, tmp_path,
                                                                     monkeypatch) -> None:
    torch.set_num_threads(2)
    monkeypatch.setenv("NEO4J_URI", neo4j_uri)
    monkeypatch.delenv("SGR_SCR_CHECKPOINT", raising=False)
    latest = tmp_path / "latest.json"  # not the test home's default checkpoint
    monkeypatch.setattr(scr_train, "latest_checkpoint_file", lambda: latest)
    qs = slice_questions(metaqa_graph, shared_data, hops=1)[:60]
    qfile = tmp_path / "1hop_slice.tsv"
    qfile.write_text("".join(f"{q.extra['raw']}\t{'|'.join(q.answers)}\n" for q in qs))
    bundle, there, folder = tmp_path / "bundle", tmp_path / "there", tmp_path / "model"
    common = ["scr", "train", "--dataset", str(qfile), "--out", str(folder)]
    res = CliRunner().invoke(app, [*common, "--trainable-layers", "1", "--epochs", "2", "--lr-graph", "3e-3",
                                   "--bundle", str(bundle)])
    assert res.exit_code == 0, res.output
    man = sb.manifest(bundle)
    assert man["data"]["dataset"] == str(qfile) and man["data"]["graph_version"] == metaqa_graph.graph_version()
    splits = [r["split"] for r in man["examples"]]
    assert 30 <= splits.count("train") < 60 and splits.count("val") >= 1  # the file's hashed train part only
    assert not folder.exists() and not latest.exists()  # written, not trained

    ran = sb.run(bundle, there, device="cpu", workdir=tmp_path / "work")
    res = CliRunner().invoke(app, [*common, "--bundle", str(bundle), "--from-bundle", str(there)])
    assert res.exit_code == 0, res.output
    assert json.loads(latest.read_text())["stepwise"] == str((folder / "best.pt").resolve())
    scr = create_method("scr", MethodContext(store=metaqa_graph, options={"device": "cpu"}))
    assert scr.meta["bundle"] == man["id"] and scr.meta["epoch"] == ran["result"]["best_epoch"]
    pred = scr.answer(qs[0])
    assert pred.paths
    for path in pred.paths:
        for h, rel, t in path.triples():
            n = metaqa_graph.read("MATCH (h:Entity {id: $h})-[r]->(t:Entity {id: $t}) WHERE type(r) = $rel "
                                  "RETURN count(r) AS n", {"h": h, "rel": rel, "t": t})[0]["n"]
            assert n > 0, (h, rel, t)
