"""The ``sgr`` command line: the Typer app assembled from the command groups in ``sgr/cli/``.

Each command parses its flags, calls one function of the package and renders the result with ``sgr/cli/render.py``.
Errors users can cause are :class:`sgr.core.errors.SgrError`: one red line on stderr and the error's exit code.
"""

from __future__ import annotations

from sgr.cli import app as _app
from sgr.cli import ask, evaluate, evidence, llm, load, models, neo4j, profile, relations, scr

app = _app.build(neo4j, load, profile, llm, models, ask, evaluate, scr, relations, evidence)

if __name__ == "__main__":
    app()
