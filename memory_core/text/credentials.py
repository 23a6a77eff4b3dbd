"""Secrets never become memory: credentials in text are replaced by `[secret]` before it is stored.

The rules live here and nowhere else. The provider formats come from detect-secrets (Yelp's maintained detector:
AWS, Azure storage, GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, Discord, Telegram,
Square, Artifactory, JWTs, URL credentials, private-key headers), without its entropy and keyword heuristics,
which would take hashes, UUIDs and ordinary prose for secrets. Ours add what it lacks: today's OpenAI, Anthropic,
Google and Hugging Face keys, bearer tokens, whole private-key blocks, passwords given as such ("my password is
...", `password=...`) and payment card numbers (Luhn-checked, so phone numbers and ids stay)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

SECRET = "[secret]"

# detect-secrets plugins whose patterns are specific formats (module, class).
_PLUGINS = (("artifactory", "ArtifactoryDetector"), ("aws", "AWSKeyDetector"),
            ("azure_storage_key", "AzureStorageKeyDetector"), ("discord", "DiscordBotTokenDetector"),
            ("github_token", "GitHubTokenDetector"), ("gitlab_token", "GitLabTokenDetector"),
            ("jwt", "JwtTokenDetector"), ("mailchimp", "MailchimpDetector"), ("npm", "NpmDetector"),
            ("openai", "OpenAIDetector"), ("pypi_token", "PypiTokenDetector"), ("sendgrid", "SendGridDetector"),
            ("slack", "SlackDetector"), ("square_oauth", "SquareOAuthDetector"), ("stripe", "StripeDetector"),
            ("telegram_token", "TelegramBotTokenDetector"), ("twilio", "TwilioKeyDetector"),
            ("basic_auth", "BasicAuthDetector"))

_OURS = (
    # a whole private key block, whatever its kind
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
               re.S),
    re.compile(r"\bsk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d\d-)?[A-Za-z0-9_-]{20,}"),  # OpenAI, Anthropic
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),  # Google API keys
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens of any kind
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
)
# The credential after a keyword that says what it is; group 1 is the secret.
_GIVEN = (
    re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})"),
    re.compile(r"(?i)\b(?:password|passwd|passphrase|passcode|pwd|pin code|api[ _-]?key|secret[ _-]?key|access[ _-]?token"
               r"|auth[ _-]?token|client[ _-]?secret)s?\b(?:\s+(?:is|was|=|:)|\s*[:=])\s*[\"'`]?([^\s\"'`,;]{3,}[^\s\"'`,;.!?:)\]])"),
)
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")


def _luhn(digits: str) -> bool:
    total = 0
    for n, d in enumerate(reversed(digits)):
        value = int(d) * (2 if n % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


@lru_cache(maxsize=1)
def _detectors() -> tuple:
    import importlib

    found = []
    for module, name in _PLUGINS:
        try:
            found.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)())
        except (ImportError, AttributeError):  # an older detect-secrets without that plugin: ours still apply
            continue
    return tuple(found)


def _spans(text: str) -> Iterable[tuple[int, int]]:
    for pattern in _OURS:
        for m in pattern.finditer(text):
            yield m.start(), m.end()
    for pattern in _GIVEN:
        for m in pattern.finditer(text):
            if m.group(1).casefold() not in {"is", "was", "the", "my", "a", "an", "not", "none", "null", SECRET}:
                yield m.start(1), m.end(1)
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1:
            yield m.start(), m.end()
    for detector in _detectors():
        for secret in set(detector.analyze_string(text)):
            if len(secret) >= 8:
                start = text.find(secret)
                while start >= 0:
                    yield start, start + len(secret)
                    start = text.find(secret, start + len(secret))


def mask_secrets(text: str) -> tuple[str, int]:
    """`text` with every credential replaced by `[secret]`; returns (masked text, how many were masked)."""
    if not text or len(text) < 8:
        return text, 0
    spans = sorted(_spans(text))
    if not spans:
        return text, 0
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, last = [], 0
    for start, end in merged:
        out.append(text[last:start])
        out.append(SECRET)
        last = end
    out.append(text[last:])
    return "".join(out), len(merged)


def without_secrets(text: str) -> str:
    """`mask_secrets` for callers that need only the text."""
    return mask_secrets(text)[0]
