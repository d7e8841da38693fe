"""What every question-answering method shares: its context, its typed options, and the usage meter.

- :class:`MethodContext` is what a factory gets (the store, the user's ``-o KEY=VALUE`` options, an LLM).
- :func:`accepts` declares, on a factory, the options its method accepts (its typed config's fields), so callers
  (``sgr.api.ask``, the docs' configuration reference) ask the registry instead of guessing from a method's name.
- :func:`parse_options` turns those options into the method's one typed config dataclass, once: an
  unknown key or a value of the wrong type is a :class:`~sgr.core.errors.ConfigError` that lists the
  valid keys, so a typo never runs with a default; a negative whole number (``-o beam=-1``) or a float that
  is not finite (``nan``, ``inf``) is refused the same way.
- :class:`UsageMeter` measures one question for every method alike: LLM calls and tokens (billed and
  cached apart, from :class:`sgr.llm.client.LLM`'s counters), stage timers, Neo4j query count and time.
"""

from __future__ import annotations

import dataclasses
import math
import time
import types
import typing
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TypeVar

from sgr.core.errors import ConfigError
from sgr.core.types import Usage
from sgr.graph.store import GraphStore

C = TypeVar("C")
F = TypeVar("F", bound=Callable[..., Any])

#: Options every method accepts whatever its config: they steer the harness or the LLM factory.
COMMON_OPTIONS = {"llm_cache"}


@dataclass
class MethodContext:
    """What a method factory may use: the store, options from flags, and an LLM (built lazily by the caller)."""

    store: GraphStore
    options: dict[str, Any] = field(default_factory=dict)
    llm: Any = None  # an sgr.llm.client.LLM when the method needs one


@dataclass
class NoOptions:
    """The config of a method without settings of its own (it accepts only :data:`COMMON_OPTIONS`)."""


def accepts(config_cls: type, extra: Iterable[str] = ()) -> Callable[[F], F]:
    """Declare on a method factory the ``-o`` options its method accepts: the fields of ``config_cls`` (the typed
    config it parses with :func:`parse_options`), the ``extra`` keys it reads itself, and :data:`COMMON_OPTIONS`."""
    def mark(factory: F) -> F:
        factory.options = config_cls  # type: ignore[attr-defined]
        factory.extra_options = frozenset(extra)  # type: ignore[attr-defined]
        return factory
    return mark


def declared_options(factory: Any) -> tuple[type, frozenset[str]]:
    """``(config class, option names)`` that :func:`accepts` declared on ``factory``; TypeError when it declared none."""
    cls = getattr(factory, "options", None)
    if cls is None:
        raise TypeError(f"method factory {factory!r} declares no options: decorate it with @accepts(ConfigClass)")
    names = {f.name for f in dataclasses.fields(cls)} | set(getattr(factory, "extra_options", ())) | COMMON_OPTIONS
    return cls, frozenset(names)


def _coerce(value: Any, hint: Any, key: str, method: str) -> Any:
    """``value`` (often a string from ``-o KEY=VALUE``) as the type ``hint`` names."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null", "")):
            if type(None) in args:
                return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _coerce(value, arg, key, method)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{method}: bad value {value!r} for option {key!r}")
    try:
        if hint is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if hint is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            number = int(value)
            if number < 0:  # every whole-number option counts something (a beam, hops, rounds, a cap)
                raise ConfigError(f"{method}: option {key}={value!r} must not be negative")
            return number
        if hint is float:
            if isinstance(value, bool):
                raise ValueError
            real = float(value)
            if not math.isfinite(real):
                raise ConfigError(f"{method}: option {key}={value!r} must be a finite number")
            return real
        if hint is str:
            return str(value)
        if origin in (tuple, list):
            items = value if isinstance(value, (list, tuple)) else [v for v in str(value).split(",") if v.strip()]
            inner = args[0] if args else str
            out = [_coerce(v.strip() if isinstance(v, str) else v, inner, key, method) for v in items]
            return tuple(out) if origin is tuple else out
    except (TypeError, ValueError):
        name = getattr(hint, "__name__", str(hint))
        raise ConfigError(f"{method}: option {key}={value!r} is not a valid {name}") from None
    return value


def llm_cache_option(options: dict[str, Any] | None, method: str) -> bool:
    """The common ``llm_cache`` option (``-o llm_cache=false``: every LLM call goes to the model) as a bool."""
    value = (options or {}).get("llm_cache", True)
    return bool(_coerce(value, bool, "llm_cache", method))


def parse_options(config_cls: type[C], options: dict[str, Any] | None, *, method: str,
                  base: C | None = None, extra_keys: set[str] | frozenset[str] = frozenset()) -> C:
    """The method's typed config: ``base`` (or the class's defaults) with ``options`` applied on top.

    Keys are the dataclass's field names; ``extra_keys`` and :data:`COMMON_OPTIONS` are accepted and
    left to the caller. Raises :class:`ConfigError` naming the valid keys for an unknown key, and the
    field and expected type for a value that does not convert.
    """
    cfg = base if base is not None else config_cls()
    fields = {f.name: f for f in dataclasses.fields(config_cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(config_cls)
    changes: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key in COMMON_OPTIONS or key in extra_keys:
            continue
        if key not in fields:
            valid = ", ".join(sorted(set(fields) | set(extra_keys) | COMMON_OPTIONS))
            raise ConfigError(f"{method}: unknown option {key!r}; valid options: {valid}")
        changes[key] = _coerce(value, hints[key], key, method)
    return dataclasses.replace(cfg, **changes) if changes else cfg  # type: ignore[type-var]


class UsageMeter:
    """Measures one question: wrap the answer in :meth:`measure`, time stages with :meth:`stage`.

    ``llm`` is an :class:`sgr.llm.client.LLM` (or None); its thread-local counters are reset on entry and
    read on exit, so cached calls count the same way in every method (``llm_cached_calls`` and the
    ``cached_*`` token fields; ``prompt_tokens``/``completion_tokens`` are billed tokens of real calls).
    """

    def __init__(self, store: GraphStore | None, llm: Any = None) -> None:
        self.store = store
        self.llm = llm
        self.usage = Usage()

    @contextmanager
    def measure(self) -> Iterator[Usage]:
        self.usage = Usage()
        if self.llm is not None:
            self.llm.take_usage()
        q0 = self.store.query_count if self.store is not None else 0
        s0 = self.store.query_seconds if self.store is not None else 0.0
        t0 = time.perf_counter()
        try:
            yield self.usage
        finally:
            if self.llm is not None:
                u = self.llm.take_usage()
                self.usage.llm_calls += u.calls
                self.usage.llm_cached_calls += u.cached
                self.usage.prompt_tokens += u.prompt_tokens
                self.usage.completion_tokens += u.completion_tokens
                self.usage.cached_prompt_tokens += u.cached_prompt_tokens
                self.usage.cached_completion_tokens += u.cached_completion_tokens
                self.usage.llm_seconds += u.seconds
            if self.store is not None:
                self.usage.neo4j_queries += self.store.query_count - q0
                self.usage.neo4j_seconds += self.store.query_seconds - s0
            self.usage.total_seconds = time.perf_counter() - t0

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.usage.add_stage(name, time.perf_counter() - t0)


def answered_by(answerer: Any) -> tuple[str, str | None]:
    """``(weights, retriever)``: one line each naming the language model a method's answerer called and the
    relation retriever it ranked relations with (None for a method that ranks none)."""
    from sgr.llm.server import describe_model
    from sgr.retrieval.relations import describe_retriever

    llm = getattr(answerer, "llm", None)
    retriever = getattr(answerer, "retriever", None)
    return (describe_model(getattr(llm, "name", None) if llm is not None else None),
            describe_retriever(retriever) if hasattr(answerer, "retriever") else None)
