"""The provider formats the attack found surviving export, and gitleaks' catalog as a checklist.

Vectors here are not derived from bourdon's rules: the labelled list below is written from the
providers' documented formats (and the issue's findings), and ``fixtures/gitleaks/tps.jsonl``
holds gitleaks' own true-positive examples, extracted from its rule definitions by
``fixtures/gitleaks/extract.py`` (gitleaks is MIT licensed; ``fixtures/gitleaks/LICENSE``).
Secrets are stored in pieces so that scanners do not flag this repository.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.redact import redact_text

GITLEAKS = Path(__file__).resolve().parent / "fixtures" / "gitleaks"

# (label, text, the secret that must not survive), from each provider's documented shape.
J = "".join
ISSUE_FORMATS: list[tuple[str, str, str]] = [
    ("azure-ad-client-secret", "the app registration uses " + J(["Xy7", "8Q~", "kPz3vR1mN0qL5wT8yU2iO4pA6sD9fG1hJ"]),
     J(["Xy7", "8Q~", "kPz3vR1mN0qL5wT8yU2iO4pA6sD9fG1hJ"])),
    ("gitlab-runner-token", "gitlab-runner register --registration " + J(["GR1348941", "zXq8Rk2LmP9vT4wY6uNb"]),
     J(["GR1348941", "zXq8Rk2LmP9vT4wY6uNb"])),
    ("docker-hub-pat", "docker login -u dana --password-stdin <<< " + J(["dckr_pat_", "aB3dE5gH7jK9mN1pQ3rS5tU7vW9"]),
     J(["dckr_pat_", "aB3dE5gH7jK9mN1pQ3rS5tU7vW9"])),
    ("basic-auth-header", "curl -H 'Authorization: Basic " + J(["ZGFuYTpodW50", "ZXIyLXNlY3JldA=="]) + "' api",
     J(["ZGFuYTpodW50", "ZXIyLXNlY3JldA=="])),
    ("curl-user", "curl -u dana:" + J(["Tr0ub4dor", "&3horse"]) + " https://api.example.com/v1",
     J(["Tr0ub4dor", "&3horse"])),
    ("redis-url", "REDIS_URL=redis://:" + J(["p4ssW0rd", "Redis42"]) + "@cache.internal:6379/0",
     J(["p4ssW0rd", "Redis42"])),
    ("django-secret-key", "SECRET_KEY = '" + J(["k#9x!m2&v", "@q7^z(w)e+r=t%y*u"]) + "'",
     J(["k#9x!m2&v", "@q7^z(w)e+r=t%y*u"])),
    ("django-insecure", "settings: django-insecure-" + J(["3f$u8!kq", "@z1#w%x^c&v*b"]),
     J(["3f$u8!kq", "@z1#w%x^c&v*b"])),
    ("mysql-p", "mysql -u root -p" + J(["S3cr3t", "Pass!"]) + " shop_db",
     J(["S3cr3t", "Pass!"])),
    ("sshpass", "sshpass -p '" + J(["hunter2", "-deploy"]) + "' ssh deploy@web1",
     J(["hunter2", "-deploy"])),
    ("password-is", "the staging db password is " + J(["Blue", "Falcon77"]) + ", rotate it monthly",
     J(["Blue", "Falcon77"])),
    ("1password-secret-key", "emergency kit: " + J(["A3-ASWWYB-", "798JRY-LJVD4-23DC2-86TVM-H43EB"]),
     J(["A3-ASWWYB-", "798JRY-LJVD4-23DC2-86TVM-H43EB"])),
    ("new-relic-user-key", "the dashboard reads " + J(["NRAK-", "7JZ2R4XQ9W1F6K0M3T8B5N2C4V1"]),
     J(["NRAK-", "7JZ2R4XQ9W1F6K0M3T8B5N2C4V1"])),
    ("mailchimp-key", "mc api " + J(["4c1b3e7f9a2d6b8c", "0e5f7a9d1b3c5e7f", "-us12"]),
     J(["4c1b3e7f9a2d6b8c", "0e5f7a9d1b3c5e7f"])),
    ("square-access-token", "square " + J(["EAAA", "l9Kc3mZ0qW8rT2yU5iO7pA1sD4fG6hJ8kL0zX3cV5bN7mQ9wE2rT4yU6iO8"]),
     J(["EAAA", "l9Kc3mZ0qW8rT2yU5iO7pA1sD4fG6hJ8kL0zX3cV5bN7mQ9wE2rT4yU6iO8"])),
    ("firebase-fcm-key", "fcm server key " + J(["AAAA", "q9Zx1Lk:APA91b", "Hk2Lm3Nn4Bb5Vv6Cc7Xx8Zz9Aa0Ss1Dd2Ff3Gg4Hh5Jj6Kk7Ll8Qq9Ww0Ee1Rr2Tt3Yy4Uu5Ii6Oo7Pp8Aa9Ss0Dd1Ff2Gg3Hh4Jj5Kk6Ll7Zz8Xx9Cc0Vv1Bb2Nn3Mm4Qq5Ww6Ee7Rr8Tt9Yy0Uu1Ii2Oo3"]),
     J(["q9Zx1Lk:APA91b", "Hk2Lm3Nn4Bb5Vv6Cc7Xx8Zz9Aa0Ss1Dd2Ff3"])),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "text", "secret"), ISSUE_FORMATS, ids=[f[0] for f in ISSUE_FORMATS]
)
def test_each_format_the_attack_found_is_redacted(label: str, text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out, out
    assert "[redacted:" in out
    assert redact_text(out) == out


# -- gitleaks' catalog: every provider rule's own examples are redacted -------------------------

CATALOG: dict[str, dict[str, Any]] = {
    rule["id"]: rule
    for rule in tomllib.loads((GITLEAKS / "gitleaks.toml").read_text(encoding="utf-8"))["rules"]
}


def _vectors() -> dict[str, list[tuple[str, str]]]:
    """Rule id -> (example, the secret in it) for each of gitleaks' own true positives."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with open(GITLEAKS / "tps.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            rule = CATALOG.get(row["rule"])
            if rule is None:
                continue
            text = J(row["parts"])
            secret = J(row["secret"]) if "secret" in row else _secret_by_gitleaks(rule, text)
            out[row["rule"]].append((text, secret))
    return out


def _secret_by_gitleaks(rule: dict[str, Any], text: str) -> str:
    """The part of a literal example gitleaks' own regex calls the secret (else all of it)."""
    try:
        match = re.search(rule.get("regex", "(?!)").replace(r"\z", r"\Z"), text)
    except re.error:
        match = None
    if match is None:
        return text
    group = rule.get("secretGroup", 1 if match.re.groups else 0)
    return match.group(group) or match.group(0)


VECTORS = _vectors()

# Catalog rules gitleaks gives no text example for that can be checked here: a file-name rule
# (pkcs12-file) and rules whose examples are built by code the extractor does not evaluate.
NO_TEXT_VECTORS = {
    "pkcs12-file", "authress-service-client-access-key", "dropbox-long-lived-api-token",
    "dropbox-short-lived-api-token", "freemius-secret-key", "hashicorp-tf-password",
    "jfrog-api-key", "jwt-base64", "kubernetes-secret-yaml", "nuget-config-password",
    "telegram-bot-api-token",
}  # fmt: skip

# Examples knowingly left, by rule: how many, and why. Each would alter ordinary code.
KNOWN_GAPS: dict[str, tuple[int, str]] = {
    "sourcegraph-access-token": (1, "a bare 40-hex value: the shape of every git SHA-1"),
    "messagebird-client-id": (1, "a UUID after ...ClientID: ids are not secrets"),
    "sumologic-access-id": (4, "a 14-character value after accessId: ids are not secrets"),
}


def test_the_vendored_catalog_is_gitleaks_default_config() -> None:
    assert len(CATALOG) == 222
    assert {"anthropic-api-key", "openai-api-key", "github-pat", "aws-access-token"} <= set(CATALOG)
    assert "MIT License" in (GITLEAKS / "LICENSE").read_text(encoding="utf-8")
    assert set(CATALOG) - set(VECTORS) == NO_TEXT_VECTORS


def _leaks(rule_id: str) -> list[str]:
    return [text for text, secret in VECTORS[rule_id] if secret in redact_text(text)]


@pytest.mark.parametrize("rule_id", sorted(VECTORS))
def test_every_catalog_provider_example_is_redacted(rule_id: str) -> None:
    leaked = _leaks(rule_id)
    allowed, _why = KNOWN_GAPS.get(rule_id, (0, ""))
    assert len(leaked) == allowed, leaked  # fewer than allowed: update KNOWN_GAPS


def test_the_catalog_figures() -> None:
    """What the report quotes: providers of the catalog whose every example is redacted."""
    whole = [r for r in VECTORS if not _leaks(r)]
    examples = sum(len(v) for v in VECTORS.values())
    leaking = sum(len(_leaks(r)) for r in VECTORS)
    assert len(whole) == len(VECTORS) - len(KNOWN_GAPS)
    assert leaking == sum(n for n, _ in KNOWN_GAPS.values()) and examples > 5000
