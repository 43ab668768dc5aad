"""More secret rules: provider formats from gitleaks' catalog of providers, and credentials
given on command lines, in headers and in prose.

The patterns are bourdon's own, written from each provider's documented key format; gitleaks'
default configuration (vendored as test data) is the checklist they are tested against, with
gitleaks' own examples as vectors. ``bourdon.access.redact`` runs these with its own rules.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final


class Lazy:
    """A regular expression compiled on first use: importing this module stays cheap (a hook
    with nothing new to export never redacts anything)."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled


@dataclass(frozen=True)
class Rule:
    """One way a secret is recognised. ``group`` names the part to replace (default: all)."""

    kind: str
    pattern: Lazy
    group: str | None = None
    check: Callable[[str], bool] | None = None
    near: Lazy | None = None  # a keyword the rule needs nearby: in the same line, or string
    same_line: bool = True

    def gated_out(self, text: str, start: int, end: int) -> bool:
        """Whether a match at ``start:end`` lacks the rule's keyword where it must be."""
        if self.near is None:
            return False
        if self.same_line:
            text = text[text.rfind("\n", 0, start) + 1 : (text.find("\n", end) + 1 or None)]
        return self.near.rx.search(text) is None


_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"

# (kind, pattern): a recognisable prefix or shape, matched wherever it appears.
_PROVIDERS: Final[tuple[tuple[str, str], ...]] = (
    ("azure-ad-client-secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    ("gitlab-token", r"GR1348941[A-Za-z0-9_-]{20}"),
    ("gitlab-token", r"gl(?:rt|cbt|ft|soat|imt|oas)-[A-Za-z0-9_-]{20,}"),
    ("gitlab-token", r"_gitlab_session=[0-9a-z]{32}"),
    ("docker-hub-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}"),
    (
        "1password-secret-key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    ("1password-token", r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("new-relic-key", r"NR(?:AK|II|JS|AA)-[A-Za-z0-9]{19,32}"),
    ("mailchimp-key", r"[0-9a-f]{32}-us\d{1,2}"),
    ("square-token", r"(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60}"),
    ("firebase-key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
    ("django-secret-key", r"django-insecure-\S{8,}"),
    ("planetscale-token", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9=._-]{32,64}"),
    ("shippo-token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("sourcegraph-token", r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}"),
    ("prefect-token", r"pnu_[A-Za-z0-9]{36}"),
    ("pulumi-token", r"pul-[a-f0-9]{40}"),
    ("readme-token", r"rdme_[a-z0-9]{70}"),
    ("rubygems-token", r"rubygems_[a-f0-9]{48}"),
    ("scalingo-token", r"tk-us-[A-Za-z0-9_-]{48}"),
    ("sendinblue-token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("settlemint-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"),
    ("typeform-token", r"tfp_[A-Za-z0-9_.=-]{59}"),
    ("heroku-key", r"HRKU-AA[A-Za-z0-9_-]{58}"),
    ("huggingface-token", r"api_org_[A-Za-z]{34}"),
    ("infracost-token", r"ico-[A-Za-z0-9]{32}"),
    ("openshift-token", r"sha256~[A-Za-z0-9_-]{43}"),
    ("mapbox-token", r"(?:pk|sk)\.[a-z0-9]{60}\.[a-z0-9]{22}"),
    (
        "yandex-token",
        r"t1\.[A-Z0-9a-z_-]+=*\.[A-Z0-9a-z_-]{86}=*|AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}",
    ),
    ("lob-key", r"(?:live|test)_(?:pub_)?[a-f0-9]{31,35}"),
    ("mailgun-key", r"pubkey-[a-f0-9]{32}"),
    ("intercom-token", r"rt-[a-z0-9_]{16,}_[a-z0-9_]{16,}"),
    ("stripe-key", r"(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}"),
    ("twitter-token", r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}"),
    (
        "microsoft-teams-webhook",
        r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/[a-z0-9@-]{40,}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9-]{36}",
    ),
    ("intra42-secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}"),
    ("flyio-token", r"fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}"),
    ("easypost-token", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("facebook-token", r"EAA[MC][A-Za-z0-9]{100,}"),
    ("facebook-token", r"\d{15,16}(?:\||%7C)[A-Za-z0-9_-]{27,40}"),
    (
        "aws-bedrock-key",
        r"ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t\S*",
    ),
    ("adobe-secret", r"p8e-[A-Za-z0-9]{32}"),
    ("sonar-token", r"sq[pua]_[A-Za-z0-9]{40}"),
    ("jfrog-api-key", r"AKCp[A-Za-z0-9]{69}"),
    ("dropbox-token", r"sl\.[A-Za-z0-9_=-]{130,}"),
    (
        "authress-key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}"
        r"\.[A-Za-z0-9+/_=-]{30,120}",
    ),
)

PROVIDER_RULES: Final[tuple[Rule, ...]] = tuple(
    Rule(kind, Lazy(_B + pattern + _E)) for kind, pattern in _PROVIDERS
)

# Substrings one of which is in every string a rule above can match (a cheap first test).
PROVIDER_TRIGGER: Final = (
    r"Q~|GR13|_gitlab|dckr_|A3-|ops_|NR[AIJ][AISK]-|-us\d|EAA|sq0|:APA91b|django-insecure|"
    r"pscale_|shippo_|sgp_|pnu_|pul-|rdme_|rubygems_|tk-us|xkeysib|sm_|tfp_|HRKU|api_org|ico-|"
    r"sha256~|[ps]k\.|t1\.|AQVN|YC|live_|test_|pubkey-|rt-|_prod_|AAAAA|webhook\.office|s-s4t2|"
    r"Basic|\s-[upH]|fo1_|fm[12]|EZ[AT]K|\d\||%7C|ABSK|bedrock-api|p8e-|--user|--header|sq[pua]_|"
    r"ZXlK|AKCp|sl\.|\.acc[_-]|(?i:contribsys|okta|sonar|sourcegraph|message[_-]?bird|sumo|telegr|"
    r"jfrog|artifactory|bintray|xray|dropbox)"
)


def _base64_jwt(value: str) -> bool:
    """A base64 value whose text is a JWT (``eyJ...`` header, a dot, ``eyJ...`` claims)."""
    try:
        text = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return re.match(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ", text) is not None


def _gated(kind: str, keyword: str, pattern: str, *, same_line: bool = True) -> Rule:
    return Rule(kind, Lazy(_B + pattern + _E), near=Lazy(keyword), same_line=same_line)


# Shapes that are a secret only where the provider is named (gitleaks' keywords do the same):
# a bare 40-hex value is a git SHA-1 until "sourcegraph" is on its line.
KEYWORD_RULES: Final[tuple[Rule, ...]] = (
    _gated("sourcegraph-token", r"(?i)sourcegraph", r"[a-fA-F0-9]{40}"),
    _gated(
        "messagebird-key",
        r"(?i)message[_-]?bird",
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    ),
    _gated("sumologic-key", r"[Ss]umo|SUMO", r"su[A-Za-z0-9]{12}"),
    _gated("telegram-token", r"(?i)telegr", r"\d{5,16}:A[A-Za-z0-9_-]{34}"),
    _gated("jfrog-api-key", r"(?i)jfrog|artifactory|bintray|xray", r"[A-Za-z0-9]{73}"),
    _gated("dropbox-token", r"(?i)dropbox", r"[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}"),
    Rule("jwt", Lazy(r"(?<![A-Za-z0-9+/])ZXlK[A-Za-z0-9+/]{40,}={0,2}"), check=_base64_jwt),
    Rule(  # a Kubernetes Secret's data: every base64 value under data:, in a kind: Secret
        "kubernetes-secret",
        Lazy(
            r"(?m)^[ \t]+(?!(?:name|namespace|type|kind|apiVersion):)[\w.-]+:[ \t]*[\"']?"
            r"(?P<secret>(?=[A-Za-z/+]*[0-9+/=])[A-Za-z0-9+/]{10,}={0,3})[\"']?[ \t]*$"
        ),
        group="secret",
        near=Lazy(r"(?i)\bkind:[ \t]*[\"']?secret\b"),
        same_line=False,
    ),
)

CONTEXT_RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "basic-auth",
        Lazy(r"(?i:\bBasic)\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        group="secret",
    ),
    Rule(  # Authorization: <anything>, Bearer and Basic included
        "authorization-header",
        Lazy(
            r"(?i:\bauthorization)[\"']?\s*:\s*[\"']?(?:(?i:bearer|basic|token|digest|apikey)\s+)?"
            r"(?P<secret>(?![$<{%\[])[^\s'\",;]{12,})"
        ),
        group="secret",
    ),
    Rule(  # curl -H "X-Api-Token: VALUE": a header named for a credential
        "authorization-header",
        Lazy(
            r"(?:-H|--header)\s*[\"']?(?i:[A-Za-z-]*(?:token|key|auth|secret|session)[A-Za-z-]*)"
            r"\s*:\s*(?:(?i:bearer|basic|token)\s+)?(?P<secret>(?![$<{%\[])[^\s'\",;]{8,})"
        ),
        group="secret",
    ),
    Rule(  # Sidekiq Enterprise's gem server credentials, named by their setting
        "sidekiq-secret",
        Lazy(
            r"(?i:BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM)[\s\S]{0,40}?"
            r"(?<![A-Za-z0-9])(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})(?![A-Za-z0-9])"
        ),
        group="secret",
    ),
    Rule(  # an Okta API token after the word okta: "00" and 40 characters
        "okta-token",
        Lazy(r"(?i:okta)[\s\S]{0,40}?(?<![A-Za-z0-9_-])(?P<secret>00[A-Za-z0-9=_-]{40})"),
        group="secret",
    ),
    Rule(  # SonarQube's login token, in the scanner's setting names
        "sonar-token",
        Lazy(
            r"(?i:\bsonar[_.]?(?:login|token))[\"']?\s*[:?]{0,3}=\s*[\"']?(?P<secret>[A-Za-z0-9_]{40,})"
        ),
        group="secret",
    ),
    Rule(  # curl -u KEY: (a key as the user name, no password)
        "command-line-password",
        Lazy(r"(?:\s|^)(?:-u|--user)[\s=]+[\"']?(?P<secret>[^\s:\"'$]{8,}):(?=[\s\"']|$)"),
        group="secret",
    ),
    Rule(  # curl -u user:pass, curl --user user:pass
        "command-line-password",
        Lazy(r"(?:\s|^)(?:-u|--user)[\s=]+[\"']?[^\s:\"']*[\"']?:[\"']?(?P<secret>[^\s\"']{3,})"),
        group="secret",
    ),
    Rule(  # mysql -pPASS (no space: a space would make the next word a database name)
        "command-line-password",
        Lazy(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?P<secret>[^\s\"']{3,})"),
        group="secret",
    ),
    Rule(  # sshpass -p PASS, -p'PASS'
        "command-line-password",
        Lazy(r"\bsshpass\s+(?:-\w+\s+)*-p\s*[\"']?(?P<secret>[^\s\"']{3,})"),
        group="secret",
    ),
    Rule(  # prose: "the password is X", "passphrase was X"
        "password",
        Lazy(
            r"(?i:\b(?:password|passwd|passphrase|pwd|pin)\s+(?:is|was|=|:)\s+)[\"'`]?"
            r"(?P<secret>(?=[^\s\"'`]*[0-9!@#$%^&*])[^\s\"'`,]{4,}?)[\"'`]?(?=[\s,.;]*(?:\s|$))"
        ),
        group="secret",
    ),
    Rule(  # NuGet.Config: <add key="ClearTextPassword" value="..." />
        "password",
        Lazy(r"(?i:<add\s+key=\"(?:ClearText)?Password\"\s+value=)\"(?P<secret>[^\"]{8,})\""),
        group="secret",
    ),
    Rule(  # Freemius' PHP SDK: 'secret_key' => 'sk_...'
        "freemius-secret-key",
        Lazy(r"[\"']secret_key[\"']\s*=>\s*[\"'](?P<secret>sk_\S{29})[\"']"),
        group="secret",
    ),
    Rule(  # Django and Flask: SECRET_KEY = '<any 16+ characters>'
        "django-secret-key",
        Lazy(
            r"\b(?:[A-Z0-9]+_)*SECRET(?:_KEY)?\s*[:=]\s*(?P<q>[\"'])(?P<secret>[^\"'\s]{16,})(?P=q)"
        ),
        group="secret",
    ),
)

# What redact.py runs after its own provider prefixes, in this order.
SHAPE_RULES: Final[tuple[Rule, ...]] = PROVIDER_RULES + KEYWORD_RULES
