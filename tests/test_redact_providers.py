"""The provider formats the attack found surviving export, and gitleaks' catalog as a checklist.

Vectors here are not derived from bourdon's rules: the labelled list below is written from the
providers' documented formats (and the issue's findings), and ``fixtures/gitleaks/tps.jsonl``
holds gitleaks' own true-positive examples, extracted from its rule definitions by
``fixtures/gitleaks/extract.py`` (gitleaks is MIT licensed; ``fixtures/gitleaks/LICENSE``).
Secrets are stored in pieces so that scanners do not flag this repository.
"""

from __future__ import annotations

import base64
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


# The catalog rules whose gitleaks examples are built by Go code the extractor does not run:
# vectors written from each provider's documented format (or gitleaks' rule comments), not
# from bourdon's rules. (label, text, the secret that must not survive.)
_JWT_IO = J(
    [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l",
        "IiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ]
)  # jwt.io's
_JWT_B64 = base64.b64encode(_JWT_IO.encode()).decode()
_K8S_SECRET = (  # kubernetes.io, "Secrets": an Opaque Secret and a dotfile Secret
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mysecret\ntype: Opaque\ndata:\n"
    "  username: YWRtaW4=\n  password: {pw}\n"
)
_K8S_DOTFILE = (
    "kind: Secret\napiVersion: v1\nmetadata:\n  name: dotfile-secret\ndata:\n  .secret-file: {v}\n"
)
_NUGET = (  # learn.microsoft.com, nuget.config reference: packageSourceCredentials
    '<packageSourceCredentials>\n  <Test_x0020_Source>\n    <add key="Username" value="user" />\n'
    '    <add key="ClearTextPassword" value="{pw}" />\n  </Test_x0020_Source>\n'
    "</packageSourceCredentials>"
)
_AKC = J(
    ["AKCp8kq", "7Rz2mW9xL4vN6bT1yH3sD5fG8jK0pQ2rS4tU6vW8xY1zA3cE5gI7kM9oQ1sU3wY5aC7eG9iK2mO"]
)[:73]
_DBX_LONG = J(["k3Jd8sLq2Pz", "AAAAAAAAAA", "Bx7mN4vC9tR2wQ6yH1uE5iO8pA3sD0fG7hJ2kL9zX4c"])
_DBX_SHORT = (
    "sl."
    + J(
        [
            "BCx7mN4vC9tR2wQ6yH1uE5iO8pA3sD0fG7hJ2kL9zX4cV6bN1mQ8wE3rT5yU7iO9pA2sD4fG6hJ",
            "8kL0zX2cV4bN6mQ1wE3rT5yU7iO9pA1sD3fG5hJ7kL9zX1cV3bN5mQ7wE9rT2yU4iO6pA8sD0fG2h",
        ]
    )[:135]
)
_AUTHRESS = J(
    ["sc_aB3dE5gH7j.kL9m.acc_", "n1pQ3rS5tU.", "Vw8xY1zA3cE5gI7kM9oQ1sU3wY5aC7eG9iK2mO-4qS"]
)
DOCUMENTED: dict[str, list[tuple[str, str]]] = {
    "telegram-bot-api-token": [  # core.telegram.org/bots: <bot id>:<35 characters>
        ("TELEGRAM_API_TOKEN = " + J(["7012345678:AAHk2mQ9", "xV4pLr7tZ1wB8nE3cJ6yU0sD5fG"]),
         J(["7012345678:AAHk2mQ9", "xV4pLr7tZ1wB8nE3cJ6yU0sD5fG"])),
        ("telegram bot: " + J(["12345:ABC-DEF1234", "ghIkl-zyx57W2v1u123ew11Q"]),
         J(["12345:ABC-DEF1234", "ghIkl-zyx57W2v1u123ew11Q"])),
    ],
    "jwt-base64": [("token in the CI log: " + _JWT_B64, _JWT_B64)],
    "kubernetes-secret-yaml": [
        (_K8S_SECRET.format(pw=J(["MWYyZDFl", "MmU2N2Rm"])), J(["MWYyZDFl", "MmU2N2Rm"])),
        (_K8S_DOTFILE.format(v=J(["dmFsdWUt", "Mg0KDQo="])), J(["dmFsdWUt", "Mg0KDQo="])),
    ],
    "nuget-config-password": [(_NUGET.format(pw=J(["hal+9ooo", "_da!sY"])), J(["hal+9ooo", "_da!sY"]))],
    "hashicorp-tf-password": [  # the azurerm_sql_server and aws_db_instance examples
        ('  administrator_login_password = "' + J(["thisIs", "Dog11"]) + '"', J(["thisIs", "Dog11"])),
        ('  password             = "' + J(["foobar", "baz"]) + '"', J(["foobar", "baz"])),
    ],
    "jfrog-api-key": [  # JFrog API keys: 73 characters, "AKC..."
        ("--set imagePullSecretJfrog.password=" + _AKC, _AKC),
        ("artifactory_api_key: " + _AKC, _AKC),
        ("JFROG_KEY=" + _AKC.lower(), _AKC.lower()),
    ],
    "dropbox-long-lived-api-token": [('dropbox_token = "' + _DBX_LONG + '"', _DBX_LONG)],
    "dropbox-short-lived-api-token": [
        ("DROPBOX_ACCESS_TOKEN=" + _DBX_SHORT, _DBX_SHORT),
        ("dropbox: " + _DBX_SHORT, _DBX_SHORT),
    ],
    "freemius-secret-key": [  # the Freemius PHP SDK's fs_dynamic_init array
        ("'secret_key' => '" + J(["sk_h;G8v(Q2@xL5", "#nR7&zT1*kW4%pY9!"]) + "',",
         J(["sk_h;G8v(Q2@xL5", "#nR7&zT1*kW4%pY9!"])),
    ],
    "authress-service-client-access-key": [  # authress.io: secrets scanning, detection
        ("AUTHRESS_KEY=" + _AUTHRESS, _AUTHRESS),
        ("authress access key: " + _AUTHRESS, _AUTHRESS),
    ],
}  # fmt: skip

VECTORS = {**_vectors(), **DOCUMENTED}

# Catalog rules with no text example: pkcs12-file matches file names, not text.
NO_TEXT_VECTORS = {"pkcs12-file"}

# Examples knowingly left, by rule: how many, and why. (None: keyword-gated shapes cover the
# bare 40-hex, UUID and short-id examples where the provider is named.)
KNOWN_GAPS: dict[str, tuple[int, str]] = {}


def test_the_vendored_catalog_is_gitleaks_default_config() -> None:
    assert len(CATALOG) == 222
    assert {"anthropic-api-key", "openai-api-key", "github-pat", "aws-access-token"} <= set(CATALOG)
    assert "MIT License" in (GITLEAKS / "LICENSE").read_text(encoding="utf-8")
    assert set(CATALOG) - set(VECTORS) == NO_TEXT_VECTORS


def test_documented_vectors_have_the_catalog_shape() -> None:
    """Each documented vector is one gitleaks' own rule finds (where its regex is Python's)."""
    for rule_id, vectors in DOCUMENTED.items():
        pattern = CATALOG[rule_id]["regex"].replace("(?-i:", "(?:")
        try:
            rx = re.compile(pattern)
        except re.error:
            continue
        for text, secret in vectors:
            assert rx.search(text) and secret in text, (rule_id, text)


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
