"""MkDocs hooks (``hooks:`` in mkdocs.yml): the reference pages generated at build time, never written by hand.

- ``reference/cli.md`` from the Typer app in ``cli.py`` (every command, argument and option, with its help);
- ``reference/configuration.md`` from the config dataclasses and settings classes (every field, type, default and
  the text that documents it: a trailing ``#`` comment, a ``#:`` comment above it, or the class docstring's bullet
  that names it);
- ``experiments/*.md``: the experiment records of ``bench/experiments/`` as pages, so the docs link to them and
  ``mkdocs build --strict`` fails on a link to a record that does not exist.

``python scripts/docs_hooks.py cli|configuration`` prints a page, to look at it without a build.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "bench" / "experiments"

# ----------------------------------------------------------------------------------------------------------------
# small Markdown helpers
# ----------------------------------------------------------------------------------------------------------------


def cell(text: Any) -> str:
    """Text for one Markdown table cell: one line, pipes escaped, angle brackets kept as text."""
    s = " ".join(str(text).split())
    s = re.sub(r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", r"`\1`", s)
    return s.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def code(text: Any) -> str:
    s = str(text)
    tick = "``" if "`" in s else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{s}{pad}{tick}".replace("|", "\\|")


def para(text: str | None) -> str:
    """A docstring as Markdown prose: dedented; reST double backticks are Markdown code spans already."""
    if not text:
        return ""
    text = inspect.cleandoc(text)
    text = re.sub(r":(?:class|func|meth|mod|data|attr):`~?([^`]+)`", r"`\1`", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


# ----------------------------------------------------------------------------------------------------------------
# the CLI reference
# ----------------------------------------------------------------------------------------------------------------


def _is_argument(param: Any) -> bool:
    """Typer vendors its own Click, so parameters are told apart by kind, not by class."""
    return getattr(param, "param_type_name", "") == "argument"


def _annotation(param: Any) -> Any:
    desc = getattr(param, "type_descriptor", None)
    return getattr(desc, "annotation", None)


def _kind(param: Any) -> str:
    hint = _annotation(param)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType")) and len(args) == 1:
        hint = args[0]
    many = typing.get_origin(hint) in (list, tuple)
    if many:
        hint = (typing.get_args(hint) or (str,))[0]
    name = {str: "TEXT", int: "INTEGER", float: "NUMBER", bool: "BOOLEAN", Path: "PATH"}.get(hint, "VALUE")
    return name + (" (repeatable)" if many else "")


def _arg_name(param: Any) -> str:
    return str(param.metavar or param.name.upper()).strip("[]")


def _param_row(param: Any) -> str:
    if _is_argument(param):
        name = code(_arg_name(param))
        kind = "argument: " + _kind(param) + ("" if param.required else ", optional")
    else:
        names = list(param.opts)
        if param.secondary_opts:
            names = [f"{a}/{b}" for a, b in zip(param.opts, param.secondary_opts)] or names
        name = ", ".join(code(n) for n in names)
        kind = "flag" if getattr(param, "is_flag", False) else _kind(param)
        if param.required:
            kind += ", required"
    default = ""
    if not param.required and not _is_argument(param):
        d = param.default
        if d not in (None, (), [], False) and not callable(d):
            default = code(d)
    help_text = getattr(param, "help", None) or ""
    return f"| {name} | {cell(kind)} | {default} | {cell(help_text)} |"


def _command_section(cmd: Any, path: list[str], level: int, out: list[str]) -> None:
    name = " ".join(path)
    out.append(f"{'#' * level} `{name}`\n")
    help_text = (cmd.help or cmd.short_help or "").strip()
    if help_text:
        out.append(para(help_text) + "\n")
    if hasattr(cmd, "commands"):
        subs = sorted(cmd.commands.items())
        if subs:
            out.append("| command | what it does |\n|---|---|")
            for sub_name, sub in subs:
                short = (sub.help or "").strip().split("\n\n")[0]
                anchor = "-".join([*path, sub_name]).replace("+", "")
                out.append(f"| [`{' '.join([*path, sub_name])}`](#{anchor}) | {cell(short)} |")
            out.append("")
        for sub_name, sub in subs:
            _command_section(sub, [*path, sub_name], min(level + 1, 4), out)
        return
    params = [p for p in cmd.params if getattr(p, "name", None) != "help" and not getattr(p, "hidden", False)]
    usage = " ".join([name, *(_arg_name(p) if p.required else f"[{_arg_name(p)}]"
                              for p in params if _is_argument(p))])
    out.append(f"```text\n{usage} [OPTIONS]\n```\n")
    if params:
        out.append("| name | kind | default | help |\n|---|---|---|---|")
        out.extend(_param_row(p) for p in params)
        out.append("")


def cli_reference() -> str:
    """The CLI reference page, from the Typer app that ``sgr`` runs."""
    import typer.main

    sys.path.insert(0, str(ROOT))
    from cli import app

    root = typer.main.get_command(app)
    out = ["# CLI reference\n",
           "Generated from the Typer app in `cli.py` at build time (`scripts/docs_hooks.py`), so it lists exactly the "
           "commands and options that `sgr` accepts. `sgr COMMAND --help` prints the same. Unknown options are refused; "
           "errors are one line with an exit code (2 input or configuration, 3 Neo4j, 4 load, 5 model, 6 Cypher "
           "refused, 7 entity not found).\n"]
    root.help = None
    _command_section(root, ["sgr"], 2, out)
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# the configuration reference
# ----------------------------------------------------------------------------------------------------------------

def method_configs() -> list[tuple[type, list[str]]]:
    """Each method config class with the methods that declare it (``sgr.methods.base.accepts``), registry order."""
    from sgr.methods.registry import METHODS, method_config

    groups: dict[type, list[str]] = {}
    for name in METHODS:
        groups.setdefault(method_config(name), []).append(name)
    return list(groups.items())


TRAINING_CONFIGS = [
    ("sgr.llm.finetune:TuneConfig", "`sgr llm tune` (its flags set these)"),
    ("sgr.retrieval.training:RelationTrainConfig", "`sgr relations train --method heads`"),
    ("sgr.retrieval.encoder_training:EncoderTrainConfig", "`sgr relations train --method encoder`"),
    ("sgr.methods.scr.model:SCRConfig", "`sgr scr train` (the model; saved in every checkpoint)"),
    ("sgr.methods.scr.train:ScrTrainConfig", "`sgr scr train` (the optimisation)"),
]
SETTINGS = ["sgr.core.config:PathSettings", "sgr.core.config:Neo4jSettings", "sgr.core.config:LLMSettings",
            "sgr.core.config:LoadSettings", "sgr.core.config:ModelFileSettings"]


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _field_comments(cls: type) -> dict[str, str]:
    """``name -> text`` from the class source: a trailing ``# comment`` (and its ``#`` continuation lines) or
    ``#:`` lines just above the field."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not dataclasses.is_dataclass(klass) and not hasattr(klass, "model_fields"):
            continue
        try:
            lines, _ = inspect.getsourcelines(klass)
        except (OSError, TypeError):
            continue
        src = textwrap.dedent("".join(lines))
        src_lines = src.splitlines()
        tree = ast.parse(src)
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node in body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            line = src_lines[node.lineno - 1]
            text = ""
            if "#" in line[node.end_col_offset:] if node.end_lineno == node.lineno else False:
                text = line[node.end_col_offset:].split("#", 1)[1].strip()
                nxt = node.lineno
                while nxt < len(src_lines) and src_lines[nxt].strip().startswith("#") and \
                        not src_lines[nxt].strip().startswith("#:"):
                    text += " " + src_lines[nxt].strip().lstrip("#").strip()
                    nxt += 1
            prev = node.lineno - 2
            above: list[str] = []
            while prev >= 0 and src_lines[prev].strip().startswith("#:"):
                above.insert(0, src_lines[prev].strip()[2:].strip())
                prev -= 1
            if above:
                text = " ".join(above)
            if text:
                out[node.target.id] = text
    return out


def _docstring_bullets(cls: type) -> list[str]:
    """The ``* …`` bullets of the docstrings along the class's MRO (SGRConfig documents its fields so)."""
    bullets: list[str] = []
    for klass in cls.__mro__:
        doc = inspect.cleandoc(klass.__dict__.get("__doc__") or "")
        current: list[str] = []
        for line in doc.splitlines():
            if line.lstrip().startswith("* "):
                if current:
                    bullets.append(" ".join(current))
                current = [line.strip()[2:]]
            elif current and line.startswith("  "):
                current.append(line.strip())
            elif current:
                bullets.append(" ".join(current))
                current = []
        if current:
            bullets.append(" ".join(current))
    return bullets


def _type_name(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("pathlib.", "").replace("NoneType", "None")


def _default(f: Any) -> str:
    if f.default is not dataclasses.MISSING:
        return code(repr(f.default))
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = f.default_factory()  # type: ignore[misc]
        return code(type(value).__name__ + "()") if dataclasses.is_dataclass(value) else code(repr(value))
    return "required"


def dataclass_table(cls: type) -> str:
    comments = _field_comments(cls)
    bullets = _docstring_bullets(cls)
    hints = typing.get_type_hints(cls)
    used: dict[int, str] = {}
    rows = ["| option | type | default | what it sets |", "|---|---|---|---|"]
    for f in dataclasses.fields(cls):
        text = comments.get(f.name, "")
        if not text:
            pattern = re.compile(r"``" + re.escape(f.name) + r"(?:\s*=[^`]*)?``")
            for i, bullet in enumerate(bullets):
                if pattern.search(bullet):
                    text = bullet if i not in used else f"see `{used[i]}`"
                    used.setdefault(i, f.name)
                    break
        rows.append(f"| `{f.name}` | {code(_type_name(hints.get(f.name, f.type)))} | {_default(f)} | {cell(text)} |")
    return "\n".join(rows)


def _class_intro(cls: type) -> str:
    """The class docstring up to its first bullet (the bullets are in the table)."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    head = doc.split("\n* ", 1)[0].strip()
    return para(head)


def settings_table(cls: Any) -> str:
    prefix = str(cls.model_config.get("env_prefix") or "")
    rows = ["| environment variable | type | default | what it sets |", "|---|---|---|---|"]
    for name, f in cls.model_fields.items():
        env = f.validation_alias if isinstance(f.validation_alias, str) else (prefix + name).upper()
        default = "—" if f.default is None else code(repr(f.default))
        rows.append(f"| `{env}` | {code(_type_name(f.annotation))} | {default} | {cell(f.description or '')} |")
    return "\n".join(rows)


def configuration_reference() -> str:
    sys.path.insert(0, str(ROOT))
    out = ["# Configuration reference\n",
           "Generated at build time (`scripts/docs_hooks.py`) from the config dataclasses and the settings classes, so "
           "every key listed here is one sgr parses, with the default it uses. Method options are given as "
           "`-o KEY=VALUE` (repeatable) to `sgr ask` and `sgr eval`, or as `options={...}` to `sgr.ask` / "
           "`sgr.evaluate`; each is parsed once into the method's typed config, and an unknown key or a bad value "
           "stops with one line that lists the valid keys (exit code 2). `llm_cache` (`-o llm_cache=false`: every "
           "model call is made, none read from the call cache) is accepted by every method.\n",
           "## Method options\n"]
    for cls, names in method_configs():
        out.append(f"### `{cls.__name__}`\n")
        used_by = ", ".join(f"`{n}`" for n in names)
        out.append(f"The options of {used_by} (each declares them with `sgr.methods.base.accepts`); defined in "
                   f"`{cls.__module__}`.\n")
        from sgr.methods.base import COMMON_OPTIONS
        from sgr.methods.registry import method_options

        extra = sorted(method_options(names[0]) - {f.name for f in dataclasses.fields(cls)} - COMMON_OPTIONS)
        if extra:
            out.append("Also accepted (read by the method's factory itself, not a config field): "
                       + ", ".join(f"`{k}`" for k in extra) + ".\n")
        intro = _class_intro(cls)
        if intro:
            out.append(intro + "\n")
        out.append(dataclass_table(cls) + "\n")
    out.append("## Environment variables\n")
    out.append("Every environment variable sgr reads is read in `sgr/core/config.py`; no other module reads "
               "`os.environ`. A value that does not parse stops with one line naming the variable (exit code 2).\n")
    for target in SETTINGS:
        cls = _load(target)
        out.append(f"### `{cls.__name__}`\n")
        out.append(_class_intro(cls) + "\n")
        out.append(settings_table(cls) + "\n")
    out.append("## Training hyper-parameters\n")
    out.append("Set through the flags of the training commands (see the [CLI reference](cli.md)); listed here with "
               "their defaults because each run records them in its provenance.\n")
    for target, used_by in TRAINING_CONFIGS:
        cls = _load(target)
        out.append(f"### `{cls.__name__}`\n")
        out.append(f"Used by {used_by}; defined in `{cls.__module__}`.\n")
        intro = _class_intro(cls)
        if intro:
            out.append(intro + "\n")
        out.append(dataclass_table(cls) + "\n")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------------------------
# MkDocs events
# ----------------------------------------------------------------------------------------------------------------

GENERATED = {"reference/cli.md": cli_reference, "reference/configuration.md": configuration_reference}


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for src_uri, make in GENERATED.items():
        files.append(File.generated(config, src_uri, content=make()))
    for record in sorted(EXPERIMENTS.glob("*.md")):
        files.append(File(f"experiments/{record.name}", src_dir=str(EXPERIMENTS.parent), dest_dir=config["site_dir"],
                          use_directory_urls=config["use_directory_urls"]))
    return files


if __name__ == "__main__":
    page = sys.argv[1] if len(sys.argv) > 1 else "cli"
    print({"cli": cli_reference, "configuration": configuration_reference}[page]())
