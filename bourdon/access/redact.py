"""Secret redaction: provider key formats, credentials in context, and an entropy second signal.

Every string an export writes passes through ``redact_text`` first, so a key pasted into a
prompt, a token in a ``curl`` command or a password in a connection string never reaches a
manifest, a staged file or a git object (redaction happens *before* the commit: history rewrite
would be the only other remedy). A secret is replaced by ``[redacted:<kind>]``::

    >>> redact_text("export ANTHROPIC_API_KEY=sk-ant-api03-" + "x1Y2z3" * 15)
    'export ANTHROPIC_API_KEY=[redacted:anthropic-key]'

Three kinds of rule, checked in this order (reliability-and-security.md section 4.5):

1. provider formats with a recognisable prefix or shape (``sk-ant-``, ``ghp_``, ``AKIA``,
   ``xoxb-``, ``eyJ...eyJ...``, PEM private keys...): matched wherever they appear;
2. credentials named by their context: ``aws_secret_access_key = ...``, ``AccountKey=...``,
   ``user:password@`` in URLs, ``password=...`` assignments;
3. a second signal for tokens without a known shape: a long, random-looking value (Shannon
   entropy, mixed character classes, not a path or a dotted identifier) right after a word
   such as key, token, secret, credential or bearer.

Pure: no I/O. ``RULES_VERSION`` changes whenever the rules do, so exports made under older
rules are redone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from bourdon.access.secretrules import CONTEXT_RULES, PROVIDER_TRIGGER, SHAPE_RULES, Lazy, Rule

RULES_VERSION: Final = "3"
PLACEHOLDER: Final = "[redacted:{kind}]"
_MIN_ROOM: Final = 64  # a redacted string may grow up to this length (the shortest field cap)
_CACHE_SIZE: Final = 50_000


def _classes(text: str) -> int:
    return sum(
        (
            any(c.islower() for c in text),
            any(c.isupper() for c in text),
            any(c.isdigit() for c in text),
        )
    )


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _mixed(text: str) -> bool:
    """Upper case, lower case and digits all present: a random token, not a word or a slug."""
    return _classes(text) == 3


def _two_classes(text: str) -> bool:
    return _classes(text) >= 2


_WORDISH = re.compile(r"(?:[a-z]+|[A-Z][a-z]+|[A-Z]+|\d{1,4})")
_HEX = re.compile(r"[0-9a-fA-F]+")
_PATHLIKE = ("/", "~", "./", "../", "http", "www.", "$", "%", "{", "<")


def looks_random(token: str, *, hex_ok: bool = True) -> bool:
    """Whether a value next to a word like "token" is a random secret rather than code or prose.

    Random: long enough, high entropy, several character classes; not a path, a URL, a
    placeholder or an identifier made of words (``config.auth.token_refresh``).
    """
    token = token.strip("\"'`.,;")
    if len(token) < 14 or token.startswith(_PATHLIKE):
        return False
    if token.isdigit():  # a numeric id or token right after "token =": long and varied
        return hex_ok and len(token) >= 16 and entropy(token) >= 2.5
    if _HEX.fullmatch(token):
        return hex_ok and len(token) >= 16 and entropy(token) >= 3.0
    parts = [p for p in re.split(r"[._/:+=-]+", token) if p]
    if parts and all(_WORDISH.fullmatch(p) for p in parts):
        return False
    if _classes(token) < 2 or (not any(c.isdigit() for c in token) and _classes(token) < 3):
        return False
    threshold = 3.2 if len(token) < 24 else 3.5
    return entropy(token) >= threshold


def _rx(pattern: str, flags: int = 0) -> Lazy:
    return Lazy(pattern, flags)


# Boundaries: a key starts where a word cannot continue it, so "desk-lamp" is not "sk-...".
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"

RULES: Final[tuple[Rule, ...]] = (
    # -- private keys first: their bodies hold every other shape --------------------------
    Rule(
        "private-key",
        _rx(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"|[A-Za-z0-9+/=\s\\:,.-]*)"
        ),
    ),
    Rule("age-secret-key", _rx(r"AGE-SECRET-KEY-1[0-9A-Z]{50,}")),
    # -- provider prefixes ----------------------------------------------------------------
    Rule("anthropic-key", _rx(_B + r"sk-ant-[A-Za-z0-9_-]{20,}")),
    Rule("openrouter-key", _rx(_B + r"sk-or-v1-[A-Za-z0-9]{32,}")),
    Rule("openai-key", _rx(_B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}")),
    Rule("openai-key", _rx(_B + r"sk-[A-Za-z0-9_-]{32,}"), check=_two_classes),
    Rule("github-token", _rx(_B + r"gh[pousr]_[A-Za-z0-9]{30,}" + _E)),
    Rule("github-token", _rx(_B + r"github_pat_[A-Za-z0-9_]{22,}")),
    Rule("gitlab-token", _rx(_B + r"gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_-]{20,}")),
    Rule("aws-access-key", _rx(_B + r"(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z0-9]{16}" + _E)),
    Rule("google-api-key", _rx(_B + r"AIza[0-9A-Za-z_-]{35}")),
    Rule("google-oauth", _rx(_B + r"(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{20,})")),
    Rule("slack-token", _rx(_B + r"xox[abposre]-[A-Za-z0-9-]{10,}")),
    Rule("slack-token", _rx(_B + r"xapp-\d-[A-Za-z0-9-]{20,}")),
    Rule(
        "slack-webhook",
        _rx(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    ),
    Rule("stripe-key", _rx(_B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    Rule("stripe-key", _rx(_B + r"whsec_[A-Za-z0-9]{24,}")),
    Rule("huggingface-token", _rx(_B + r"hf_[A-Za-z0-9]{30,}" + _E), check=_two_classes),
    Rule("npm-token", _rx(_B + r"npm_[A-Za-z0-9]{36}" + _E)),
    Rule("pypi-token", _rx(_B + r"pypi-AgE[A-Za-z0-9_-]{40,}")),
    Rule("twilio-key", _rx(_B + r"SK[0-9a-fA-F]{32}" + _E)),
    Rule("sendgrid-key", _rx(_B + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}")),
    Rule("digitalocean-token", _rx(_B + r"do[por]_v1_[a-f0-9]{64}")),
    Rule("jwt", _rx(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?")),
    Rule(
        "discord-token",
        _rx(_B + r"[A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}" + _E),
        check=_mixed,
    ),
    Rule(
        "discord-webhook",
        _rx(r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,}"),
    ),
    Rule("telegram-token", _rx(_B + r"\d{6,12}:AA[A-Za-z0-9_-]{32,34}" + _E)),
    Rule("shopify-token", _rx(_B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E)),
    Rule("databricks-token", _rx(_B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E)),
    Rule("linear-key", _rx(_B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E)),
    Rule("groq-key", _rx(_B + r"gsk_[A-Za-z0-9]{48,}")),
    Rule("replicate-token", _rx(_B + r"r8_[A-Za-z0-9]{37}" + _E)),
    Rule("mailgun-key", _rx(_B + r"key-[0-9a-f]{32}" + _E)),
    Rule("postman-key", _rx(_B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E)),
    Rule("supabase-token", _rx(_B + r"sbp_[a-f0-9]{40}" + _E)),
    Rule(
        "grafana-token",
        _rx(_B + r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=]{32,})"),
    ),
    Rule("sentry-token", _rx(_B + r"sntry[su]_[A-Za-z0-9+/=_-]{40,}")),
    Rule("notion-token", _rx(_B + r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})" + _E)),
    Rule("vault-token", _rx(_B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}")),
    Rule("doppler-token", _rx(_B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}")),
    Rule("xai-key", _rx(_B + r"xai-[A-Za-z0-9]{60,}")),
    Rule("perplexity-key", _rx(_B + r"pplx-[A-Za-z0-9]{40,}")),
    Rule("atlassian-token", _rx(_B + r"ATATT3[A-Za-z0-9_=-]{60,}")),
    Rule("tailscale-key", _rx(_B + r"tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}")),
    *SHAPE_RULES,
    # -- credentials named by their context -----------------------------------------------
    *CONTEXT_RULES,
    Rule(
        "aws-secret-key",
        _rx(
            r"(?i:aws[_-]?secret[_-]?(?:access[_-]?)?key(?:[_-]?id)?)[\"']?\s*(?:[:=]|=>|\s)\s*"
            r"[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        group="secret",
    ),
    Rule(
        "azure-storage-key",
        _rx(r"(?i:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
        group="secret",
    ),
    Rule(
        "azure-sas",
        _rx(r"[?&]sig=(?P<secret>[A-Za-z0-9%+/=]{20,})"),
        group="secret",
    ),
    Rule(
        "url-credentials",
        _rx(r"(?i:\b[a-z][a-z0-9+.-]{1,20})://(?P<secret>[^\s/?#@:'\"<>\[\]]*:[^\s/?#@'\"<>]+)@"),
        group="secret",
    ),
    Rule(
        "password",
        _rx(
            r"(?i:\b(?:(?:[a-z0-9]+[_-]){0,3}(?:password|passwd|passphrase|pwd)|[a-z0-9]+[_-]pass))"
            r"[\"']?\s*"
            r"(?:[:=]|=>|:=)\s*"
            r"(?:\"(?P<dq>[^\"\s]{3,})\"|'(?P<sq>[^'\s]{3,})'|"
            r"(?P<bare>[^\s\"',;(){}\[\]<>]{3,})(?![(\[.\w]))"
        ),
    ),
    # -- the second signal: a random-looking value right after a telling word -------------
    Rule(
        "secret",
        _rx(
            r"(?i:\b(?P<word>(?:[a-z0-9]+[_-]){0,4}(?:[a-z0-9]{1,30}?)??"
            r"(?:api|access|secret|private|client|auth|app|"
            r"master|signing|encryption|session|refresh|bearer|id)?(?:key|token|secret|password|"
            r"passwd|credentials?|auth|bearer|signature))(?:[_-]?[A-Za-z0-9]){0,24}?)"
            r"[\"'>]?[ \t]*(?:(?::[ \t]*)?(?:string|str|String|var|let|const)[ \t]+)?"
            r"(?:[.:?+]{0,3}=|=>|[:,>]|\s+(?:is\s+|was\s+|of\s+)?)\s*[\"'`]?"
            r"(?P<secret>[A-Za-z0-9+/_.~=-]{14,})"
        ),
        group="secret",
    ),
)

# A string none of these can be found in is clean: most strings are, and skip every rule.
_TRIGGER = _rx(
    r"PRIVATE KEY|AGE-SECRET|sk-|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|"
    r"AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIza|"
    r"GOCSPX|ya29\.|xox|xapp-|hooks\.slack|_live_|_test_|whsec_|hf_|npm_|pypi-|SK[0-9a-fA-F]|"
    r"SG\.|do[por]_v1|\.[A-Za-z0-9_-]{6,7}\.|discord|:AA|eyJ|shp|dapi|lin_|gsk_|r8_|key-|PMAK|"
    r"sbp_|gl(?:sa|c)_|sntry|ntn_|secret_|hv[sbr]\.|dp\.|xai-|pplx-|ATATT|tskey|://|sig=|"
    r"(?i:key|token|secret|pass|pwd|credential|auth|bearer|signature)|" + PROVIDER_TRIGGER
)


@dataclass
class Findings:
    """What redaction replaced: how many secrets of each kind."""

    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def to_dict(self) -> dict[str, int]:
        return dict(sorted(self.kinds.items()))


class Redactor:
    """Redacts strings, remembering results: manifests repeat the same strings many times."""

    def __init__(self) -> None:
        self.findings = Findings()
        self._cache: dict[str, tuple[str, tuple[str, ...]]] = {}

    def text(self, value: str) -> str:
        cached = self._cache.get(value)
        if cached is None:
            cached = _redact(value)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[value] = cached
        for kind in cached[1]:
            self.findings.kinds[kind] += 1
        return cached[0]

    def value(self, value: Any) -> Any:
        """``value`` with every string in it redacted (mappings, keys included, and lists)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                (self.text(k) if isinstance(k, str) else k): self.value(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def redact_text(text: str) -> str:
    """``text`` with every secret replaced by ``[redacted:<kind>]``."""
    return _redact(text)[0]


def find_secrets(text: str) -> list[str]:
    """The kinds of secret ``text`` holds, in the order they were found (empty: clean)."""
    return list(_redact(text)[1])


def redacted(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a manifest (or a change in its shape) with every string redacted: what each
    write path (``commit_to_federation``, ``bourdon commit``, promote, sync) hands the store."""
    return redact_manifest(data)[0]


def redacted_or_none(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if data is None else redacted(data)


def redact_manifest(data: Mapping[str, Any]) -> tuple[dict[str, Any], Findings]:
    """A copy of a manifest (or any JSON-like mapping) with every string redacted."""
    redactor = Redactor()
    result = redactor.value(data)
    return result, redactor.findings


def _redact(text: str) -> tuple[str, tuple[str, ...]]:
    if not text or not _TRIGGER.rx.search(text):
        return text, ()
    original = text
    kinds: list[str] = []
    for rule in RULES:
        text, found = _apply(rule, text)
        kinds += [rule.kind] * found
    if not kinds:
        return original, ()
    return _fit(text, len(original)), tuple(kinds)


def _apply(rule: Rule, text: str) -> tuple[str, int]:
    found = 0
    if rule.near is not None and not rule.near.rx.search(text):
        return text, 0

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        if rule.gated_out(match.string, match.start(), match.end()):
            return match.group(0)
        if "dq" in rule.pattern.rx.groupindex:  # a password assignment: quoted or bare
            name = next(g for g in ("dq", "sq", "bare") if match.group(g) is not None)
            value = match.group(name)
            if _placeholder_value(value) or (name == "bare" and _DOTTED.rx.fullmatch(value)):
                return match.group(0)
            start, end = match.span(name)
        elif rule.group:
            value = match.group(rule.group)
            start, end = match.span(rule.group)
            if "word" in rule.pattern.rx.groupindex:
                hex_ok = _HASH_WORDS.rx.fullmatch(match.group("word")) is None
                if not looks_random(value, hex_ok=hex_ok):
                    return match.group(0)
                value = value.rstrip(".")
                end = start + len(value)
        else:
            value = match.group(0)
            start, end = match.span()
        if rule.check is not None and not rule.check(value):
            return match.group(0)
        found += 1
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + PLACEHOLDER.format(kind=rule.kind) + whole[end - offset :]

    return rule.pattern.rx.sub(replace, text), found


# Words after which a hex string is a content hash or an id, not a credential.
_HASH_WORDS = Lazy(
    r"(?i)(?:(?:[a-z0-9]+[_-])*(?:cache|sort|partition|primary|foreign|row|idempotency|object|"
    r"lookup|dedup|hash)[_-]?)?key"
)

_NOT_A_PASSWORD = Lazy(
    r"(?i)(?:none|null|nil|true|false|undefined|required|optional|string|str|\*+|x{3,}|\.{3}|"
    r"<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%\(?\w*\)?s?|\{\{?[^}]*\}?\}|\[redacted:[a-z-]+\].*|"
    r"os\.environ.*|env\(.*|getpass.*|input\(.*|prompt|ask|changeme_placeholder)"
)


def _placeholder_value(value: str) -> bool:
    """A password "value" that is a reference, a placeholder or a type, not a password."""
    return bool(_NOT_A_PASSWORD.rx.fullmatch(value.strip("\"'")))


# ``password=form.password``: a bare value that is an attribute of an object, not a password.
_DOTTED = Lazy(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")

_PLACED = Lazy(r"\[redacted:[a-z-]+\]")


def _fit(text: str, original: int) -> str:
    """Keep a redacted string within the room it had (at least ``_MIN_ROOM``).

    Placeholders can be longer than the secret they replace; a field that was within its
    length cap must stay within it, so the tail is cut (never inside a placeholder).
    """
    room = max(original, _MIN_ROOM)
    if len(text) <= room:
        return text
    cut = room - 1
    for match in _PLACED.rx.finditer(text):
        if match.start() < cut < match.end():
            cut = match.start()
            break
    return text[:cut].rstrip() + "…"
