"""Keeping secrets out of text: errors, failed queue rows, dream state, worker status, logs and pages.

Scrub whole texts before cutting them to length: a key cut in two would escape both the exact match and the
key-shaped patterns.
"""

from __future__ import annotations

import logging
import re
from typing import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

MASK = "***"
_KEYLIKE = re.compile(r"\b(?:sk|rk|pk|key|api[-_]?key|mc)[-_][A-Za-z0-9_\-\*\.]{8,}", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)\S+", re.IGNORECASE)
# a scheme from where its run of characters starts (at every "a" of "a.a.a.a..." it was quadratic)
_URL_USERINFO = re.compile(r"((?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]*://)[^/\s@?#]+@", re.IGNORECASE)
SECRET_PARAMS = ("api-key", "api_key", "apikey", "key", "token", "access_token", "auth", "password", "secret",
                 "client_secret", "sig", "signature", "code", "sslpassword", "passwd", "pwd")
_SECRET_QUERY = re.compile(r"([?&](?:%s)=)[^&\s#\"']+" % "|".join(re.escape(p) for p in SECRET_PARAMS), re.IGNORECASE)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")


PIECE = 8  # a run of this many characters of a known secret is a piece of it, masked wherever it appears


def scrub(text: object, *secrets: str | None) -> str:
    """`text` without the given secrets nor any piece of them (`PIECE` characters or more: servers echo a
    refused key cut, starred in the middle or without its prefix), nor anything shaped like an API key, a
    bearer token, a JWT, URL credentials or a secret query parameter."""
    text = str(text)
    # The shapes first: masking a known key's pieces first would cut off the "sk-" that marks the rest.
    text = _BEARER.sub(rf"\1{MASK}", text)
    text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
    text = _SECRET_QUERY.sub(rf"\1{MASK}", text)
    text = _JWT.sub(MASK, text)
    text = _KEYLIKE.sub(MASK, text)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, MASK)
        if len(secret) > PIECE:
            text = _mask_pieces(text, secret)
    return text


def _mask_pieces(text: str, secret: str) -> str:
    """`text` with every run of `PIECE` or more characters that also occurs in `secret` masked (one mask a run)."""
    grams = {secret[i:i + PIECE] for i in range(len(secret) - PIECE + 1)}
    covered = bytearray(len(text))
    found = False
    for i in range(len(text) - PIECE + 1):
        if text[i:i + PIECE] in grams:
            covered[i:i + PIECE] = b"\x01" * PIECE
            found = True
    if not found:
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(MASK)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def mask_url(url: str | None) -> str | None:
    """A URL fit to show: credentials and secret-looking query parameters masked."""
    if not url:
        return url
    return scrub(url)


def mask_query(url: str) -> str:
    """`url` with the values of its secret-looking query parameters (`?password=`, `?api-key=`) masked."""
    return _SECRET_QUERY.sub(rf"\1{MASK}", url)


def url_secrets(url: str | None) -> list[str]:
    """The secret parts of a URL (user info, password, secret query values), to scrub wherever they appear:
    each as written in the URL and percent-decoded (a log may quote either)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = []
    if parts.username:
        found.append(parts.username)
    if parts.password:
        found.append(parts.password)
    for pair in parts.query.split("&"):
        key, _, raw = pair.partition("=")
        if unquote(key).lower() in SECRET_PARAMS and raw:
            found.append(raw)
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=False) if k.lower() in SECRET_PARAMS and v]
    found += [unquote(s) for s in found]
    return list(dict.fromkeys(s for s in found if len(s) >= 4))


def split_query(url: str | None) -> tuple[str | None, dict[str, str]]:
    """A base URL without its query string, and that query as a dict: the openai client appends request
    paths to the base URL as text, so a `?api-key=` in it must travel as default query parameters."""
    if not url:
        return url, {}
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), dict(parse_qsl(parts.query))


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs every record (message, arguments and traceback text) of secrets."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg, record.args = scrub(message, *self.secrets), None
        if record.exc_text:
            record.exc_text = scrub(record.exc_text, *self.secrets)
        record.exc_info = None if record.exc_text else record.exc_info
        return True


def install_log_redaction(secrets: Iterable[str | None] = ()) -> RedactingFilter:
    """Scrub every record that reaches the root logger's handlers (the app entrypoint and the MCP server call
    this once, after configuring logging)."""
    flt = RedactingFilter(secrets)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(flt)
    return flt


# Loggers of the HTTP stack under the openai client: at INFO and DEBUG they log request URLs, which may hold
# credentials (user:password@host, ?api-key=). A filter on a logger sees every record made on it, whatever
# handlers the application configures.
LIBRARY_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "openai._base_client", "urllib3")
_library_filter = RedactingFilter()


def protect_library_logs(*secrets: str | None) -> None:
    """Scrub `secrets` (and anything shaped like one) from the HTTP libraries' own log records."""
    for secret in secrets:
        if secret and secret not in _library_filter.secrets:
            _library_filter.secrets.append(secret)
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _library_filter not in logger.filters:
            logger.addFilter(_library_filter)
