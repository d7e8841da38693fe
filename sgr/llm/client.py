"""The LLM layer: every model call sgr makes goes through :class:`LLM`.

:class:`LLM` wraps a LangChain chat model (``ChatOpenAI`` for any OpenAI-compatible endpoint: the local
llama.cpp server of :mod:`sgr.llm.server`, OpenAI, vLLM, Ollama …; tests pass a scripted fake chat model) and adds
what a small local model needs to be useful and what an evaluation needs to be honest:

* **constrained decoding** (``constrained=True``): JSON answers are constrained by the pydantic schema and free
  text by a GBNF grammar, both sent in the request body (``extra_body``). Dialects: ``llamacpp`` sends
  ``response_format={"type": "json_object", "schema": S}`` and ``grammar``; ``openai`` (OpenAI, vLLM, Ollama)
  sends ``response_format={"type": "json_schema", …}`` and cannot constrain by a grammar. (llama.cpp's server
  answers the ``json_schema`` form with HTTP 500, hence two dialects.)
* **structured outputs with repair**: a reply that is not valid JSON for the schema is shown back to the model
  with the parse/validation error, up to ``max_retries`` times, before :class:`~sgr.core.errors.LLMError`.
* **Yes/No token probabilities** from ``top_logprobs`` of the first generated token, for the SGR validation
  scores δ and ρ (Hu et al., SGR §3.4) and a training-free PRP-RM scorer.
* **accounting**: calls, prompt/completion tokens, seconds and calls per stage, kept per thread (so parallel
  evaluation workers attribute calls to their own question) and returned/reset by :meth:`LLM.take_usage`.
* **an on-disk cache** (:class:`sgr.llm.cache.KVCache`, one SQLite file per model under ``cache_dir("llm")``)
  keyed by model name + messages + parameters (grammar, schema, max_tokens, stop, logprobs): reruns are free
  and reproducible; a cache hit bills no tokens and counts its tokens (as first answered) apart, in
  ``LLMUsage.cached*``, so every method reports billed and cached tokens alike.
* **transport retries** (tenacity, exponential back-off) on connection errors, timeouts, 429 and 5xx.
* outputs are stripped of chat-template tokens such as ``<|im_end|>``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from sgr.core.config import LLMSettings, cache_dir as default_cache_dir, read_settings
from sgr.core.errors import LLMError, LLMUnavailable
from sgr.llm.cache import KVCache

M = TypeVar("M", bound=BaseModel)

#: Completion budget when a caller gives none (a 135M model can ramble to the end of its context otherwise).
DEFAULT_MAX_TOKENS = 512
#: Log-prob given to "Yes"/"No" when it is absent from the top-k list: the smallest seen minus this margin.
MISSING_LOGPROB_MARGIN = 1.0
DIALECTS = ("llamacpp", "openai", "none")

_TEMPLATE_TOKENS = re.compile(r"<\|[A-Za-z0-9_:\-]{1,40}\|>(?:assistant|user|system)?|</s>|<s>|\[/?INST\]")


#: how long a new client waits for the local server's /v1/models when the server is answering someone else
BUSY_SERVER_WAIT_S = 30.0


@dataclass
class LLMUsage:
    """What the model was asked for: calls (cached ones included); billed tokens and seconds of real calls;
    the tokens that cache hits would have cost (as first answered) apart, so every method counts alike."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    by_stage: dict[str, int] = field(default_factory=dict)
    cached: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0

    def add(self, other: "LLMUsage") -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.seconds += other.seconds
        self.cached += other.cached
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.cached_completion_tokens += other.cached_completion_tokens
        for stage, n in other.by_stage.items():
            self.by_stage[stage] = self.by_stage.get(stage, 0) + n


@dataclass
class CallRecord:
    """One model call as it was answered (for a cache hit: as it was answered the first time)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool
    top_logprobs: list[dict[str, float]] | None = None  # first token's alternatives: [{"token": t, "logprob": lp}]
    token_logprobs: list[tuple[str, float]] | None = None  # every generated token with its log-probability


@dataclass
class StructuredResult:
    """Outcome of :meth:`LLM.try_structured`: the parsed value (None if every attempt failed) and each attempt."""

    value: BaseModel | None
    attempts: list[str]
    errors: list[str]


def strip_template_tokens(text: str) -> str:
    """Remove chat-template tokens (``<|im_end|>``, ``<|im_start|>assistant``, ``</s>`` …) and outer blanks."""
    return _TEMPLATE_TOKENS.sub("", text).strip()


def extract_json(text: str) -> str:
    """The JSON value in a reply: the text itself, a fenced block's body, or the first balanced ``{…}``/``[…]``."""
    text = strip_template_tokens(text)
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    if text[:1] in "{[":
        return text
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return text
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return text[start:]


def _message_payload(messages: Sequence[BaseMessage]) -> list[list[str]]:
    return [[m.type, m.content if isinstance(m.content, str) else json.dumps(m.content, sort_keys=True)]
            for m in messages]


def _transport_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    try:
        import openai

        errors += [openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                   openai.InternalServerError]
    except ImportError:  # pragma: no cover - langchain-openai depends on openai
        pass
    try:
        import httpx

        errors += [httpx.TransportError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


def _context_overflow(exc: BaseException) -> bool:
    """Was the refusal about a prompt longer than the model's context? (langchain's ContextOverflowError, which
    langchain-openai raises from its own module, or the server's words for it.)"""
    try:
        from langchain_core.exceptions import ContextOverflowError
    except ImportError:  # pragma: no cover - an older langchain-core
        ContextOverflowError = ()  # type: ignore[assignment]  # noqa: N806
    text = str(exc).lower()
    return isinstance(exc, ContextOverflowError) or any(
        w in text for w in ("context_length_exceeded", "exceeds the available context", "exceed context window",
                            "context window", "maximum context length"))


def _rejection(exc: BaseException) -> bool:
    """An error of the OpenAI client or its HTTP layer, whichever module raised it (langchain-openai subclasses)."""
    try:
        import openai

        if isinstance(exc, openai.OpenAIError):
            return True
    except ImportError:  # pragma: no cover
        pass
    return any(c.__module__.split(".")[0] in ("openai", "httpx") for c in type(exc).__mro__)


class LLM:
    """A chat model with constrained decoding, structured outputs, Yes/No log-probs, accounting and a cache.

    ``chat``: any LangChain chat model. ``name``: the model name used as cache key. ``cache_dir``: folder of the
    on-disk call cache (None: no cache). ``constrained``: send schema/grammar constraints (the endpoint must
    support ``dialect``). ``logprobs``: the endpoint returns token log-probabilities.
    """

    def __init__(self, chat: BaseChatModel, *, name: str, cache_dir: Path | None = None, constrained: bool = False,
                 logprobs: bool = False, dialect: str = "llamacpp", transport_retries: int = 2,
                 base_url: str | None = None) -> None:
        if dialect not in DIALECTS:
            raise LLMError(f"unknown constraint dialect {dialect!r} (known: {', '.join(DIALECTS)})")
        self.chat = chat
        self.name = name
        self.constrained = constrained and dialect != "none"
        self.dialect = dialect
        self.logprobs = logprobs
        self.base_url = base_url
        self.transport_retries = transport_retries
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80] or "model"
        self._cache = KVCache(cache_dir / f"{safe}.sqlite", "calls") if cache_dir is not None else None
        self._local = threading.local()

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_endpoint(cls, base_url: str, model: str, *, api_key: str | None = None, cache_dir: Path | None = None,
                      dialect: str = "none", logprobs: bool = True, temperature: float = 0.0, timeout_s: float = 120.0,
                      transport_retries: int = 2) -> "LLM":
        """An :class:`LLM` over ``ChatOpenAI`` for any OpenAI-compatible endpoint (``base_url`` ends in ``/v1``)."""
        from langchain_openai import ChatOpenAI

        if dialect not in DIALECTS:
            raise LLMError(f"unknown constraint dialect {dialect!r} (SGR_LLM_CONSTRAINT; known: {', '.join(DIALECTS)})")
        chat = ChatOpenAI(base_url=base_url, model=model, api_key=api_key or "local", temperature=temperature,
                          timeout=timeout_s, max_retries=0)
        return cls(chat, name=model, cache_dir=cache_dir, constrained=dialect != "none", logprobs=logprobs,
                   dialect=dialect, transport_retries=transport_retries, base_url=base_url)

    @classmethod
    def from_settings(cls, settings: LLMSettings | None = None, *, cache: bool = True) -> "LLM":
        """The configured model: ``SGR_LLM_BASE_URL``/``SGR_LLM_MODEL``/``OPENAI_API_KEY``, else the local server.

        ``SGR_LLM_CONSTRAINT`` (``llamacpp`` | ``openai`` | ``none``) picks how constraints are sent; the default is
        ``llamacpp`` for the local server and ``none`` for other endpoints. ``SGR_LLM_LOGPROBS=0`` says an endpoint
        gives no log-probabilities. Raises :class:`LLMError` with a one-line hint when no endpoint is usable.
        """
        s = settings or read_settings(LLMSettings)
        if s.base_url:
            base_url = s.base_url.rstrip("/")
            if not s.model:
                raise LLMError("SGR_LLM_BASE_URL is set but SGR_LLM_MODEL is not: set the model name the endpoint serves")
            model, local = s.model, False
        else:
            from sgr.llm import server as local_llm

            info = local_llm.status()
            if info is None:
                raise LLMError("no LLM endpoint: start the local model with `sgr llm serve` "
                               "(or set SGR_LLM_BASE_URL and SGR_LLM_MODEL for another OpenAI-compatible server)")
            # a busy server (one thread, generating for another client) answers only after its current reply
            if not local_llm.models_endpoint_ready(info.base_url, timeout_s=BUSY_SERVER_WAIT_S):
                raise LLMError(f"the local LLM server (pid {info.pid}) does not answer at {info.base_url}: "
                               f"restart it with `sgr llm stop && sgr llm serve` (log: {info.log})")
            base_url, model, local = info.base_url, s.model or info.model, True
        return cls.from_endpoint(base_url, model, api_key=s.api_key,
                                 cache_dir=default_cache_dir("llm") if (cache and s.cache) else None,
                                 dialect=s.constraint_dialect(local), logprobs=s.logprobs, temperature=s.temperature,
                                 timeout_s=s.timeout_s, transport_retries=s.max_retries)

    # -- accounting ----------------------------------------------------------------------------
    def _usage(self) -> LLMUsage:
        usage = getattr(self._local, "usage", None)
        if usage is None:
            usage = self._local.usage = LLMUsage()
        return usage

    def usage(self) -> LLMUsage:
        """This thread's counters so far (not reset)."""
        return self._usage()

    def take_usage(self) -> LLMUsage:
        """Return this thread's counters and reset them."""
        usage = self._usage()
        self._local.usage = LLMUsage()
        return usage

    @property
    def last_call(self) -> CallRecord | None:
        """This thread's most recent call (tokens/seconds as first answered, and whether it came from the cache)."""
        return getattr(self._local, "last", None)

    # -- the one place that calls the model ----------------------------------------------------
    def _params(self, *, max_tokens: int | None, stop: list[str] | None, grammar: str | None,
                schema: dict[str, Any] | None, logprobs: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """(cache-key parameters, invoke kwargs) for one call."""
        key: dict[str, Any] = {"max_tokens": max_tokens or DEFAULT_MAX_TOKENS, "stop": stop or None}
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        if self.dialect == "openai":
            kwargs["max_tokens"] = key["max_tokens"]  # ChatOpenAI sends it as max_completion_tokens (OpenAI's name)
        else:
            # llama.cpp (and Ollama's OpenAI layer) read the classic max_tokens, not max_completion_tokens
            extra["max_tokens"] = key["max_tokens"]
        if stop:
            kwargs["stop"] = list(stop)
        if self.constrained and grammar and self.dialect == "llamacpp":
            extra["grammar"] = key["grammar"] = grammar
        if schema is not None:
            key["schema"] = schema
            if self.constrained and self.dialect == "llamacpp":
                extra["response_format"] = {"type": "json_object", "schema": schema}
            elif self.constrained and self.dialect == "openai":
                extra["response_format"] = {"type": "json_schema",
                                            "json_schema": {"name": "answer", "schema": schema, "strict": False}}
        if logprobs:
            key["logprobs"] = logprobs
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = logprobs
        key["constrained"] = self.dialect if (self.constrained and ("grammar" in key or schema is not None)) else None
        if extra:
            kwargs["extra_body"] = extra
        return key, kwargs

    def _call(self, messages: Sequence[BaseMessage], *, stage: str, max_tokens: int | None = None,
              stop: list[str] | None = None, grammar: str | None = None, schema: dict[str, Any] | None = None,
              logprobs: int | None = None) -> CallRecord:
        key_params, kwargs = self._params(max_tokens=max_tokens, stop=stop, grammar=grammar, schema=schema,
                                          logprobs=logprobs)
        key = hashlib.sha256(json.dumps({"model": self.name, "messages": _message_payload(messages),
                                         "params": key_params}, sort_keys=True).encode()).hexdigest()
        usage = self._usage()
        usage.calls += 1
        usage.by_stage[stage] = usage.by_stage.get(stage, 0) + 1
        if self._cache is not None:
            hit = self._cache.get_json(key)
            if hit is not None:
                usage.cached += 1
                record = CallRecord(text=hit["text"], prompt_tokens=hit["prompt_tokens"],
                                    completion_tokens=hit["completion_tokens"], seconds=hit["seconds"],
                                    cached=True, top_logprobs=hit.get("top_logprobs"),
                                    token_logprobs=[tuple(t) for t in hit["token_logprobs"]]
                                    if hit.get("token_logprobs") is not None else None)
                usage.cached_prompt_tokens += record.prompt_tokens
                usage.cached_completion_tokens += record.completion_tokens
                self._local.last = record
                return record
        t0 = time.perf_counter()
        reply = self._invoke(messages, kwargs)
        seconds = time.perf_counter() - t0
        meta = reply.usage_metadata or {}
        record = CallRecord(text=strip_template_tokens(reply.content if isinstance(reply.content, str)
                                                       else json.dumps(reply.content)),
                            prompt_tokens=int(meta.get("input_tokens") or 0),
                            completion_tokens=int(meta.get("output_tokens") or 0),
                            seconds=seconds, cached=False,
                            top_logprobs=_first_token_alternatives(reply) if logprobs else None,
                            token_logprobs=_token_logprobs(reply) if logprobs else None)
        usage.prompt_tokens += record.prompt_tokens
        usage.completion_tokens += record.completion_tokens
        usage.seconds += seconds
        self._local.last = record
        if self._cache is not None:
            self._cache.put_json(key, {"text": record.text, "prompt_tokens": record.prompt_tokens,
                                  "completion_tokens": record.completion_tokens, "seconds": seconds,
                                  "top_logprobs": record.top_logprobs, "token_logprobs": record.token_logprobs})
        return record

    def _invoke(self, messages: Sequence[BaseMessage], kwargs: dict[str, Any]) -> AIMessage:
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        transport = _transport_errors()
        where = f" at {self.base_url}" if self.base_url else ""
        try:
            for attempt in Retrying(stop=stop_after_attempt(self.transport_retries + 1),
                                    wait=wait_exponential(multiplier=0.5, max=8),
                                    retry=retry_if_exception_type(transport), reraise=True):
                with attempt:
                    reply = self.chat.invoke(list(messages), **kwargs)
        except transport as exc:
            raise LLMUnavailable(f"the LLM endpoint{where} did not answer ({type(exc).__name__}: {_one_line(exc)}): "
                           "is `sgr llm serve` running, or SGR_LLM_BASE_URL right?") from exc
        except Exception as exc:  # the endpoint rejected the request (bad model name, unsupported parameter …)
            if _rejection(exc) and _context_overflow(exc):
                raise LLMError(f"the prompt is longer than the model's context window{where} ({_one_line(exc)}): "
                               "shorten the question or the topic names, or serve the model with a larger "
                               "--n-ctx") from exc
            if _rejection(exc):
                raise LLMError(f"the LLM endpoint{where} rejected the request ({type(exc).__name__}: "
                               f"{_one_line(exc)})") from exc
            raise
        if not isinstance(reply, AIMessage):  # pragma: no cover - chat models return AIMessage
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        return reply

    # -- public calls --------------------------------------------------------------------------
    def complete(self, messages: Sequence[BaseMessage], *, stage: str, grammar: str | None = None,
                 max_tokens: int | None = None, stop: list[str] | None = None) -> str:
        """Free text (constrained by the GBNF ``grammar`` when the endpoint supports it), template tokens stripped."""
        return self._call(messages, stage=stage, grammar=grammar, max_tokens=max_tokens, stop=stop).text

    def complete_scored(self, messages: Sequence[BaseMessage], *, stage: str, grammar: str | None = None,
                        max_tokens: int | None = None) -> CallRecord:
        """Like :meth:`complete`, with every generated token's log-probability in ``token_logprobs`` (None when
        the endpoint gives none)."""
        return self._call(messages, stage=stage, grammar=grammar, max_tokens=max_tokens,
                          logprobs=1 if self.logprobs else None)

    def try_structured(self, messages: Sequence[BaseMessage], schema: type[M], *, stage: str, max_retries: int = 2,
                       max_tokens: int | None = None) -> StructuredResult:
        """Like :meth:`structured` but never raises for bad output: returns the value (or None) and every attempt."""
        json_schema = schema.model_json_schema()
        convo = list(messages)
        attempts: list[str] = []
        errors: list[str] = []
        for _ in range(max_retries + 1):
            text = self._call(convo, stage=stage, schema=json_schema, max_tokens=max_tokens).text
            attempts.append(text)
            try:
                return StructuredResult(schema.model_validate_json(extract_json(text)), attempts, errors)
            except ValidationError as exc:
                error = _validation_summary(exc)
            errors.append(error)
            convo = [*list(messages), AIMessage(content=text), HumanMessage(content=(
                f"That answer cannot be used: {error}. Reply again with only one JSON object that matches this "
                f"JSON schema, no other text: {json.dumps(json_schema, separators=(',', ':'))}"))]
        return StructuredResult(None, attempts, errors)

    def structured(self, messages: Sequence[BaseMessage], schema: type[M], *, stage: str, max_retries: int = 2,
                   max_tokens: int | None = None) -> M:
        """A pydantic ``schema`` instance parsed from the reply.

        When ``self.constrained`` the reply is constrained to the schema's JSON schema; a reply that does not parse
        or validate is shown back to the model with its error, up to ``max_retries`` times; then :class:`LLMError`.
        """
        result = self.try_structured(messages, schema, stage=stage, max_retries=max_retries, max_tokens=max_tokens)
        if result.value is None:
            raise LLMError(f"the model gave no valid {schema.__name__} for stage {stage!r} after "
                           f"{len(result.attempts)} attempts (last error: {result.errors[-1]})")
        return result.value  # type: ignore[return-value]

    def yes_no_logprobs(self, messages: Sequence[BaseMessage], *, stage: str,
                        top_logprobs: int = 10) -> tuple[float, float] | None:
        """``(log p("Yes"), log p("No"))`` for the first generated token, or None when the endpoint gives no logprobs.

        Alternatives of the first token are matched case- and space-insensitively (``"Yes"``, ``" yes"`` …) and the
        probabilities of all variants of one answer are summed (log-sum-exp). An answer absent from the top-k gets
        the smallest log-prob seen minus ``MISSING_LOGPROB_MARGIN``, an upper bound on its true value.
        """
        if not self.logprobs:
            return None
        record = self._call(messages, stage=stage, max_tokens=1, logprobs=top_logprobs)
        alternatives = record.top_logprobs
        if not alternatives:
            return None
        return yes_no_from_alternatives(alternatives)


def yes_no_from_alternatives(alternatives: Sequence[dict[str, float]]) -> tuple[float, float]:
    """Pool first-token alternatives ``[{"token", "logprob"}]`` into (log p(yes), log p(no)) (see yes_no_logprobs)."""
    found: dict[str, list[float]] = {"yes": [], "no": []}
    seen: list[float] = []
    for alt in alternatives:
        lp = float(alt["logprob"])
        if not math.isfinite(lp):
            continue
        seen.append(lp)
        word = str(alt["token"]).strip().lower().strip(".,!:;\"'")
        if word in found:
            found[word].append(lp)
    floor = (min(seen) if seen else 0.0) - MISSING_LOGPROB_MARGIN

    def pooled(values: list[float]) -> float:
        if not values:
            return floor
        top = max(values)
        return top + math.log(sum(math.exp(v - top) for v in values))

    return pooled(found["yes"]), pooled(found["no"])


def _first_token_alternatives(reply: AIMessage) -> list[dict[str, float]] | None:
    """``response_metadata["logprobs"]["content"][0]["top_logprobs"]`` as ``[{"token", "logprob"}]`` (or None)."""
    logprobs = (reply.response_metadata or {}).get("logprobs")
    if not logprobs:
        return None
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    first = content[0]
    alts = first.get("top_logprobs") or []
    out = [{"token": a.get("token", ""), "logprob": float(a.get("logprob", float("-inf")))} for a in alts]
    if first.get("token") is not None and not any(a["token"] == first["token"] for a in out):
        out.append({"token": first["token"], "logprob": float(first.get("logprob", float("-inf")))})
    return out or None


def _token_logprobs(reply: AIMessage) -> list[tuple[str, float]] | None:
    """``response_metadata["logprobs"]["content"]`` as ``[(token, logprob)]`` (or None)."""
    logprobs = (reply.response_metadata or {}).get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    return [(str(t.get("token", "")), float(t.get("logprob", float("-inf")))) for t in content]


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {err.get('msg', '')}")
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


_SHARED_LOCK = threading.Lock()
_SHARED: dict[bool, "LLM"] = {}


def shared_llm(cache: bool = True) -> "LLM":
    """One :class:`LLM` per process from the settings (raises LLMError when none is reachable)."""
    with _SHARED_LOCK:
        if cache not in _SHARED:
            _SHARED[cache] = LLM.from_settings(cache=cache)
        return _SHARED[cache]


def reset_shared_llm() -> None:
    """Forget the process's shared :class:`LLM`s (after the local server was restarted with other weights)."""
    with _SHARED_LOCK:
        _SHARED.clear()
