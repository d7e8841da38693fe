"""The small exception hierarchy of sgr.

Every error a user can cause (bad input, a server that is down, a missing install step) is an
``SgrError`` whose message is one line that says what happened and what to do. ``cli.py`` prints
that line and exits with ``exit_code``; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class SgrError(Exception):
    """Base class: ``str(err)`` is a message for people; ``exit_code`` is what the CLI returns."""

    exit_code: int = 1


class ConfigError(SgrError):
    """A setting, flag or environment variable is missing or invalid."""

    exit_code = 2


class InputError(SgrError):
    """A file or record given by the user cannot be read (names the file, line and field)."""

    exit_code = 2


class Neo4jUnavailable(SgrError):
    """Neo4j cannot be reached at the configured URI."""

    exit_code = 3


class Neo4jServerError(SgrError):
    """The embedded Neo4j could not be built, started or stopped."""

    exit_code = 3


class LoadError(SgrError):
    """A load stopped (error budget exceeded, unreadable file); what was loaded before stays."""

    exit_code = 4


class LLMError(SgrError):
    """The chat model is unreachable or kept answering in a form that cannot be used."""

    exit_code = 5


class LLMUnavailable(LLMError):
    """The chat-model endpoint does not answer at all (after retries): runs stop, as for Neo4j."""


class CypherError(SgrError):
    """Generated Cypher was rejected (not read-only, invalid) or failed to run."""

    exit_code = 6


class EntityNotFound(SgrError):
    """No graph node matches the question's entity mentions."""

    exit_code = 7
