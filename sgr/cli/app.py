"""The ``sgr`` Typer application: one-line errors, unknown options refused, command groups registered from modules."""

from __future__ import annotations

import errno
from types import ModuleType
from typing import Any

import click
import typer
from typer.core import TyperGroup

from sgr.cli.render import error_line
from sgr.core.errors import ConfigError, SgrError

HELP = "Grounded question answering over a Freebase-style knowledge graph in Neo4j."


class SgrGroup(TyperGroup):
    """The root command: an :class:`SgrError` from any command becomes one red line on stderr and its exit code.

    Handled here (not around ``app()``) so that ``sgr`` on the shell and Typer's ``CliRunner`` in tests behave the
    same. Unknown options are refused by Click itself (usage error, exit code 2).
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SgrError as exc:
            error_line(str(exc))
            ctx.exit(exc.exit_code)
        except UnicodeEncodeError as exc:  # an argument held bytes that are not UTF-8 (argv's lone surrogates)
            if "surrogate" not in str(exc.reason):
                raise
            bad = exc.object[exc.start] if isinstance(exc.object, str) else "?"
            byte = f"byte 0x{ord(bad) - 0xDC00:02x}" if "\udc80" <= bad <= "\udcff" else repr(bad)
            error_line(f"an argument is not valid UTF-8 ({byte}): pass UTF-8 text")
            ctx.exit(2)
        except OSError as exc:  # a full or read-only disk is the user's to fix, not a bug
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
                raise
            error_line(f"cannot write {exc.filename or 'a file'}: {exc.strerror}: free some space (or choose another "
                       "folder) and rerun; runs resume")
            ctx.exit(2)


def build(*modules: ModuleType) -> typer.Typer:
    """The app with each module's commands: every module of ``sgr/cli`` has ``register(app)``."""
    app = typer.Typer(cls=SgrGroup, help=HELP, no_args_is_help=True, pretty_exceptions_enable=False,
                      add_completion=False)
    for module in modules:
        module.register(app)
    return app


def group(app: typer.Typer, name: str, help: str, **kwargs: Any) -> typer.Typer:
    """A command group ``sgr NAME …`` added to ``app``."""
    sub = typer.Typer(help=help, no_args_is_help=True, **kwargs)
    app.add_typer(sub, name=name)
    return sub


def key_values(items: list[str] | None, flag: str = "--option") -> dict[str, str]:
    """``KEY=VALUE`` flags as a dict (values stay strings; the method's typed config parses them)."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out
