"""Robust extraction of one Cypher query from a chat model's reply (SGR §3.4.1, the output side of g_θ).

Small local models wrap queries in many ways; :func:`extract_cypher` undoes the ones seen in practice:

* chat-template tokens that leak into the text (``<|im_end|>``, ``<|im_start|>assistant``, ``<|endoftext|>``,
  ``</s>``, ``<|eot_id|>``);
* Markdown code fences (```` ```cypher … ``` ````, ```` ``` … ``` ````) and inline back-quoted queries;
* a leading label such as ``Answer:``, ``Cypher:``, ``Query:`` or ``Cypher query:``;
* Markdown-escaped underscores (``languages\\_spoken``) and escaped back-ticks;
* trailing prose after the query (cut at the first blank line or at a line that is not Cypher) and a final ``;``;
* relationship types that need back-ticks (Freebase names contain dots: ``[:location.country.languages_spoken]``
  becomes ``[:`location.country.languages_spoken`]``), also inside ``[r:a.b|c.d*1..2]``.

The result is a single statement, or ``""`` when the reply holds no recognisable query.
"""

from __future__ import annotations

import re

CHAT_TOKENS = re.compile(
    r"<\|im_start\|>\s*(?:assistant|user|system)?|<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>|<\|end\|>|</s>|<s>"
    r"|<\|assistant\|>|<\|user\|>|<\|system\|>")
FENCE = re.compile(r"```[ \t]*(?:cypher|sql|neo4j|cql|text)?[ \t]*\n?(.*?)(?:```|$)", re.IGNORECASE | re.DOTALL)
LEADING_LABEL = re.compile(r"^\s*(?:(?:the\s+)?(?:final\s+)?(?:answer|cypher(?:\s+query)?|query|output|result)\s*[:：]\s*)+",
                           re.IGNORECASE)
#: Where a statement starts: a pattern clause ``MATCH (`` in any case, or another clause keyword in upper case
#: (so prose such as "this will return …" is not taken for ``RETURN``). Write clauses are included so the
#: validator sees and rejects them.
START_PATTERN = re.compile(r"\b(OPTIONAL\s+MATCH|MATCH|CREATE|MERGE)\s*\(", re.IGNORECASE)
START_UPPER = re.compile(r"\b(UNWIND|CALL|LOAD\s+CSV|FOREACH|DETACH\s+DELETE|DELETE|DROP|WITH|RETURN)\b")
#: Words a line of a Cypher query may start with (a line starting otherwise ends the query).
CLAUSE_START = re.compile(
    r"^\s*(OPTIONAL\s+MATCH|MATCH|WHERE|WITH|UNWIND|CALL|RETURN|ORDER\s+BY|SKIP|LIMIT|AND|OR|NOT|XOR|UNION|YIELD|"
    r"CREATE|MERGE|DELETE|DETACH|SET|REMOVE|FOREACH|"
    r"\(|-|<|\)|\]|\}|,|\.|ASC|DESC|DISTINCT|AS|CASE|WHEN|THEN|ELSE|END|[A-Za-z_][A-Za-z0-9_]*\s*[.(=<>])",
    re.IGNORECASE)
# a relationship pattern body: [ var? : types props? range? ]
REL_PATTERN = re.compile(r"\[\s*([A-Za-z_][A-Za-z0-9_]*)?\s*:\s*([^\]\{\*]+?)\s*(\*[0-9.\s]*)?\s*(\{[^\]]*\})?\s*\]")
SIMPLE_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def strip_chat_tokens(text: str) -> str:
    """Remove chat-template control tokens that servers sometimes leave in the content."""
    return CHAT_TOKENS.sub("", text)


def _start(text: str) -> int | None:
    """Offset of the first clause that can start a statement (see START_PATTERN / START_UPPER)."""
    hits = [m.start() for m in (START_PATTERN.search(text), START_UPPER.search(text)) if m]
    return min(hits) if hits else None


def _from_fence(text: str) -> str | None:
    for m in FENCE.finditer(text):
        body = m.group(1).strip()
        if _start(body) is not None:
            return body
    return None


def _cut_prose(text: str) -> str:
    """Keep the query from its first clause keyword to the end of the Cypher lines."""
    start = _start(text)
    if start is None:
        return ""
    body = text[start:]
    lines: list[str] = []
    for i, line in enumerate(body.splitlines()):
        if not line.strip():
            if lines:
                break
            continue
        if i > 0 and not CLAUSE_START.match(line):
            break
        lines.append(line.rstrip())
    query = "\n".join(lines).strip()
    # a sentence glued to the end of a one-line query ("... RETURN x.name This query finds ...")
    query = re.sub(r"(\bRETURN\b[^\n]*?)(?:\s+(?:This|The|Here|Note|It|That)\b.*)$", r"\1", query, flags=re.IGNORECASE)
    return query


def quote_relationship_types(query: str) -> str:
    """Back-tick every relationship type in ``[…]`` patterns that is not a plain identifier.

    ``[:a.b.c]`` → ``[:`a.b.c`]``, ``[r:a.b|c.d*1..2]`` → ``[r:`a.b`|`c.d`*1..2]``; already-quoted
    types and plain identifiers (``[:directed_by]``) are kept as they are.
    """

    def fix(m: re.Match[str]) -> str:
        var, types, rng, props = m.group(1) or "", m.group(2), m.group(3) or "", m.group(4) or ""
        parts = []
        for raw in re.split(r"\|:?", types):
            t = raw.strip()
            if not t:
                continue
            if t.startswith("`") and t.endswith("`") and len(t) >= 2:
                parts.append(t)
            elif SIMPLE_IDENT.match(t):
                parts.append(t)
            else:
                parts.append("`" + t.strip("`").replace("`", "``") + "`")
        inner = f"{var}:{'|'.join(parts)}{rng.strip()}"
        if props:
            inner += " " + props
        return f"[{inner}]"

    return REL_PATTERN.sub(fix, query)


def extract_cypher(text: str) -> str:
    """Return the one Cypher statement contained in a model reply (see the module docstring)."""
    if not text:
        return ""
    s = strip_chat_tokens(text)
    s = s.replace("\\_", "_").replace("\\`", "`").replace("\\*", "*")
    fenced = _from_fence(s)
    if fenced is not None:
        s = fenced
    else:
        s = s.strip().strip("`").strip()  # inline `MATCH ...`
    s = LEADING_LABEL.sub("", s)
    s = _cut_prose(s)
    if not s:
        return ""
    s = s.split(";")[0].strip() if ";" in s and not re.search(r"['\"][^'\"]*;[^'\"]*['\"]", s) else s.strip()
    s = quote_relationship_types(s)
    return s.strip()
