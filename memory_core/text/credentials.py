"""Secrets never become memory: credentials in text are replaced by `[secret]` before it is stored.

Every way text enters memory calls `mask_secrets` (through `check_memory_text`), so the rules live here and in
credential_rules.py and nowhere else. Detection is built on detect-secrets' full plugin set: its format plugins
(AWS, Azure, GitHub, GitLab, Slack, Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, Discord, Telegram, Square,
IBM, Cloudant, Softlayer, Artifactory, JWTs, URL credentials), its keyword plugin on the lines that name a
credential and its entropy plugins on quoted strings, each with its context rules (templated values, `$VAR`,
sequences, UUIDs; its line-wide indirect-reference filter is our linear code-reference rule). Ours add what it
lacks: other providers' formats, whole JWTs and private keys (with or without their header), assignments in env
files, JSON, URLs, headers and command lines, "the password is ..." in many languages, login pairs, TOTP seeds,
recovery codes, payment cards (issuer prefix and Luhn), base64 of a credential, keys split in pieces or with
invisible characters inside. Only the secret value becomes `[secret]`: "DB_PASSWORD=hunter2x!" is stored as
"DB_PASSWORD=[secret]".

It runs on every write, so it stays linear and cheap: private-key blocks only where a header is, the formats on
the windows of long tokens, the keyword rules only where one of their words is. Measured on the labelled tables
tests/data/credentials_table.json and credentials_fresh.json (tests/text/test_credential_table.py)."""

from __future__ import annotations

import base64
import binascii
import bisect
import math
import re
from functools import lru_cache
from typing import Iterable, Iterator

from memory_core.text import credential_rules as rules

SECRET = "[secret]"
_KEYWORD_GROUPS = ("CONFIG_DENYLIST_REGEX_TO_GROUP", "QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP")
_LINE_LIMIT = 2000  # the keyword plugin's patterns are run on lines up to this length
_CONTEXT = 80  # characters before a long token that detect-secrets' format plugins may need
_PATH = re.compile(r"^/|://|^[a-z][\w-]*(?:\.[a-z][\w-]*)+(?:/|$)")
_CODE_CHARS = re.compile(r"[()\[\]{}<>\"'`\\\s]")  # never in key material, often in code
_VERSION = re.compile(r"[\d.]+")
_SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_VOWELS = frozenset("aeiouy")
# A reference in code rather than a value: settings.llm_api_key, get_secret(...), KEY, TOKEN_PREFIX.
_CODE_REFERENCE = re.compile(r"[a-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_][\w.]*[(\[].*|[A-Z][A-Z_]*")


@lru_cache(maxsize=1)
def _plugins() -> tuple:
    """detect-secrets' format plugins that this version has, its keyword plugin's pattern groups, its filters."""
    import importlib

    formats = []
    for module, name in rules.DETECT_SECRETS_PLUGINS:
        try:
            formats.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)())
        except (ImportError, AttributeError):  # an older detect-secrets without that plugin: ours still apply
            continue
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    groups = tuple(getattr(keyword, name) for name in _KEYWORD_GROUPS if hasattr(keyword, name))
    return tuple(formats), keyword.KeywordDetector(), groups, heuristic, Base64HighEntropyString(), HexHighEntropyString()


def key_strength(name: str) -> str | None:
    """How much a key's name says its value is a credential: "strong" (password, api_key, client_secret...),
    "weak" (key, token, sig...: the value must also look random) or None."""
    words = [w.casefold() for w in rules.CAMEL.findall(name.replace("ñ", "n"))]
    if not words or any(w in rules.NOT_SECRET_WORDS for w in words):
        return None
    if any(w in rules.STRONG_WORDS for w in words) or any(pair in rules.STRONG_PAIRS for pair in zip(words, words[1:])):
        return "strong"
    if any(w.endswith(end) and len(w) - len(end) <= 8 for w in words for end in ("password", "passwd", "passphrase")):
        return "strong"  # PGPASSWORD, dbpassword, MYSQLPASSWD: a password's name run together with what it opens
    return "weak" if any(w in rules.WEAK_WORDS for w in words) else None


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Key material rather than a word, a number or an id: long, mixed letters and digits or high entropy."""
    if len(value) < 8 or rules.UUID.match(value) or rules.PLACEHOLDER.match(value):
        return False
    if value.isalpha() and (value.islower() or len(value) < 16):
        return False
    if _PATH.search(value) or _CODE_CHARS.search(value):
        return False  # a URL, a path or a host name
    if made_of_words(value) or ("/" in value and all(len(s) <= 3 or made_of_words(s) for s in value.split("/"))):
        return False  # an identifier or a path made of words
    if value.isdigit():
        return len(value) >= 16 and _entropy(value) >= 3.0
    has_letter, has_digit = any(c.isalpha() for c in value), any(c.isdigit() for c in value)
    return (has_letter and has_digit and _entropy(value) >= 2.8) or (len(value) >= 16 and _entropy(value) >= 3.5)


def made_of_words(value: str) -> bool:
    """An identifier or a name made of words (AWS_SECRET_ACCESS_KEY, LocalDocumentStore, text-embedding-3-small,
    self.rank.__getitem__), not key material: its pieces are mostly words (three letters or more, with a vowel)."""
    words = bad = 0
    for segment in filter(None, re.split(r"[^A-Za-z0-9]+", value)):
        if not any(c.islower() for c in segment) and any(c.isdigit() for c in segment) and len(segment) >= 8:
            return False  # upper case and digits: base32, an AWS id
        for part in _PART.findall(segment):
            if part.isdigit():
                if len(part) > 4:
                    return False
                continue
            words += 1
            bad += len(part) < 3 or not _VOWELS & set(part.casefold()) or (part.isupper() and len(part) > 12)
    return words > 0 and bad <= max(1, words // 4)


def names_a_credential(value: str) -> bool:
    """A name such as MEMORY_CORE_OIDC_CLIENT_SECRET, RefreshToken or api_key: a variable, not its value."""
    return (" " not in value and not any(c.isdigit() for c in value) and made_of_words(value)
            and key_strength(value) is not None)


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and other characters `value` mixes."""
    return sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
                any(not c.isalnum() for c in value)))


def _password_like(value: str, quoted: bool, rest: str) -> bool:
    """A value given after "password"-like words is a password unless it is a placeholder, too short, or a plain
    word that the sentence goes on from ("the password is in the vault", "password: see 1Password")."""
    if rules.PLACEHOLDER.match(value) or len(value) < 3 or not any(c.isalnum() for c in value):
        return False
    if not quoted and (_CODE_REFERENCE.fullmatch(value) or value[0] in "{[<$%" or "(" in value
                       or _SNAKE.fullmatch(value)):
        return False  # code: a reference, a call, a template, a snake_case variable
    if names_a_credential(value) or value.count(" ") > 4:
        return False  # the name of a credential (client_secret=CLIENT_SECRET), or a sentence
    if value.isdigit():
        return len(value) >= 4
    if quoted:
        return True
    if value.isalpha() and value.islower():
        return False  # a plain word: prose, not a password (a quoted one is taken above)
    return not (value.isalpha() and rest[:1] == " " and rest[1:2].isalpha())


def _beside_its_account(text: str, keyword_at: int, value: str, end: int) -> bool:
    """A plain lower-case word given as a password where the account it opens is named just before it (see
    rules.LOGIN_CUE), ending its clause, and no word that says how a password is."""
    return (value.isalpha() and value.islower() and len(value) >= 6 and value not in rules.STATE_WORDS
            and (end == len(text) or text[end] in ".,;!?)\n") and not rules.PLACEHOLDER.match(value)
            and rules.LOGIN_CUE.search(text, max(0, keyword_at - 80), keyword_at) is not None)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """A value without the sentence punctuation that follows it."""
    while end > start and text[end - 1] in ".,;:)]}>" and (end == len(text) or not text[end].isalnum()):
        end -= 1
    return start, end


def _value_span(text: str, m: re.Match, group: str = "v") -> tuple[int, int, bool]:
    start, end = m.span(group)
    if end - start >= 2 and text[start] in "\"'`" and text[end - 1] == text[start]:
        return start + 1, end - 1, True
    return (*_trim(text, start, end), False)


MAX_PLUGIN_TOKEN = 2048  # characters: longer than any key, token or JWT detect-secrets knows


def _formats(text: str) -> Iterator[tuple[int, int]]:
    """Credentials recognisable by their format alone: providers' keys, JWTs, private keys, prefixes of keys."""
    for m in rules.PREFIXES.finditer(text):
        yield m.span()
    if not rules.LONG_TOKEN.search(text):  # every format is, or holds, a token of 16 characters or more
        return
    if "PRIVATE KEY" in text or "PuTTY-User-Key-File" in text:
        for m in rules.PRIVATE_BLOCKS.finditer(text):
            yield m.span()
    # The formats (ours, and detect-secrets' patterns, which read a little context before a token: "aws ...
    # secret = X") run once, on the long tokens with what precedes them on their line; what they find is then
    # located in the text.
    # A token of a few characters over and over ("//////", "-=-=-=") is no key; one longer than MAX_PLUGIN_TOKEN is read
    # by our formats alone: some of detect-secrets' patterns are quadratic in such a run (npm's, at every "//").
    tokens = [m for m in rules.LONG_TOKEN.finditer(text) if len(set(m.group(0))) >= 6]

    def lines(chosen: Iterable[re.Match]) -> str:
        return "\n".join(text[start:end] for start, end in _merge(
            (max(m.start() - _CONTEXT, text.rfind("\n", 0, m.start()) + 1), m.end()) for m in chosen))

    short = lines(m for m in tokens if m.end() - m.start() <= MAX_PLUGIN_TOKEN)
    found = {secret for detector in _plugins()[0] for secret in detector.analyze_string(short) if len(secret) >= 8}
    found.update(m.group(0) for m in rules.PROVIDERS.finditer(lines(tokens)))
    for secret in found:
        yield from _occurrences(text, secret)


def _occurrences(text: str, found: str, offset: int = 0) -> Iterator[tuple[int, int]]:
    start = text.find(found)
    while start >= 0:
        yield offset + start, offset + start + len(found)
        start = text.find(found, start + len(found))


def _keyword_plugin(text: str) -> Iterator[tuple[int, int]]:
    """detect-secrets' keyword plugin on the lines that assign to a name of a credential, with its filters (its
    line-wide indirect-reference filter is replaced by ours on the value, `_password_like`, which is linear)."""
    _, detector, groups, heuristic, _, _ = _plugins()
    offset = 0
    for line in text.splitlines(keepends=True):
        if len(line) <= _LINE_LIMIT and rules.KEYWORD_ASSIGNED.search(line):
            for group in groups:
                for found in set(detector.analyze_string(line, group)):
                    found = found.strip().rstrip(",;)")
                    if (len(found) < 3 or " " in found or heuristic.is_templated_secret(found)
                            or heuristic.is_prefixed_with_dollar_sign(found) or heuristic.is_sequential_string(found)
                            or heuristic.is_potential_uuid(found)):
                        continue
                    for start, end in _occurrences(line, found):
                        quoted = start > 0 and line[start - 1] in "\"'`"
                        if _password_like(found, quoted, line[end:end + 2]):
                            yield offset + start, offset + end
        offset += len(line)


def _assignments(text: str) -> Iterator[tuple[int, int]]:
    """Values given to a credential's name: env lines, configuration, JSON, XML, URL parameters, headers, flags."""
    m = rules.ASSIGNMENT.search(text)
    while m is not None:
        strength = key_strength(m.group("k"))
        if strength is not None and not rules.PLACEHOLDER.match(m.group("v").strip("\"'`")):
            start, end, quoted = _value_span(text, m)
            value = text[start:end]
            if (strength == "strong" and _password_like(value, quoted, text[end:end + 2])) or looks_random(value):
                yield start, end
        # a value that is not a credential's may hold an assignment itself ("Cookie: sessionid=...")
        m = rules.ASSIGNMENT.search(text, m.end() if strength else m.start("v"))
    for m in rules.XML_VALUE.finditer(text):
        group = "v" if m.group("v") is not None else "w"
        if group == "w" or key_strength(m.group("k")):
            yield m.span(group)
    for m in rules.URL_PARAM.finditer(text):
        strength = key_strength(m.group("k"))
        value = m.group("v")
        if strength and (looks_random(value) or (strength == "strong" and not rules.PLACEHOLDER.match(value))):
            yield m.span("v")
    folded = text.casefold()
    for pattern in (rules.HEADER, rules.CLI_FLAG) if any(s in folded for s in rules.CLI_STEMS) else (rules.HEADER,):
        for m in pattern.finditer(text):
            group = next(g for g in ("v", "w", "x", "y") if g in m.re.groupindex and m.group(g) is not None)
            if not rules.PLACEHOLDER.match(m.group(group)):
                yield _trim(text, *m.span(group))


def _sentences(text: str) -> Iterator[tuple[int, int]]:
    """ "the password for the wifi is X", "mein Passwort ist X", "パスワードはXです", login pairs, seeds."""
    for m in rules.NATURAL.finditer(text):
        if any(word.casefold() in rules.GAP_STOP for word in m.group("gap").split()):
            continue
        keyword = m.group("k").casefold()
        if rules.PLACEHOLDER.match(m.group("v")):
            continue
        start, end = _trim(text, *m.span("v"))
        value = text[start:end]
        quoted = start > 0 and text[start - 1] in "\"'`「“‘«"
        if value.isdigit() and (groups := rules.DIGIT_GROUPS.match(text, end)):
            digits = sum(c.isdigit() for c in text[start:groups.end()])
            if 4 <= digits <= 16:  # a code in groups: "1 2 3 4", "36 24 36"
                yield start, groups.end()
                continue
        if any(w in keyword.replace("keypad", "") for w in ("token", "key", "cred", "seed")) and "pass" not in keyword:
            taken = looks_random(value) or (quoted and len(value) >= 6)
        elif value.isdigit() and len(value) == 3 and ("security" in keyword or keyword.startswith("cv")):
            taken = True  # a card's security code
        else:
            taken = _password_like(value, quoted, text[end:end + 2]) or _beside_its_account(text, m.start(), value, end)
        if taken:
            yield start, end
    for m in rules.BARE.finditer(text):
        quote = m.group("v")[0] if m.group("v")[0] in "\"'`" else ""
        value = m.group("v")[len(quote):].rstrip(".,;:)").removesuffix(quote)
        classes = _classes(value)
        given = re.search(r"(?i)\b(?:with|using|via)\s+(?:the\s+)?$", text[max(0, m.start() - 12):m.start()])
        if (classes >= 3 or (given and classes >= 2)) and any(c.isdigit() for c in value) \
                and not _CODE_CHARS.search(value) and not rules.PLACEHOLDER.match(value):
            yield m.start("v") + len(quote), m.start("v") + len(quote) + len(value)
    folded = text.casefold()
    pairs = (rules.LOGIN_PAIR, rules.LOGIN_LABELLED) if "/" in text else ()
    for m in (m for pattern in pairs for m in pattern.finditer(text)):
        start, end = _trim(text, *m.span("v"))
        value = text[start:end]
        if len(value) >= 4 and not _VERSION.fullmatch(value) and _password_like(value, False, text[end:end + 2]):
            yield start, end
    for m in rules.PIN_BARE.finditer(text) if any(s in folded for s in ("pin", "puk", "passcode", "comb", "şifre")) else ():
        yield m.span("v" if m.group("v") else "w")
    for m in rules.TOKEN_BARE.finditer(text):
        value = m.group("v")
        if looks_random(value) or (len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value)):
            yield m.span("v")
    for m in rules.USED_FOR.finditer(text) if " use " in folded else ():
        yield m.span("v")
    for m in rules.VALUE_FIRST.finditer(text) if " use " in folded else ():
        value = m.group("v")
        if _classes(value) >= 3 and _password_like(value, False, ""):  # a word, a name or a number is not one
            yield m.span("v")
    for m in rules.TOTP_GROUPS.finditer(text) if any(s in folded for s in rules.TOTP_STEMS) else ():
        yield m.span("v")
    for m in rules.RECOVERY.finditer(text) if any(s in folded for s in rules.RECOVERY_STEMS) else ():
        stop = text.find("\n\n", m.end())
        window_end = min(m.end() + 400, len(text) if stop < 0 else stop)
        for code in rules.CODE_TOKEN.finditer(text, m.end(), window_end):
            yield code.span()


def _phrases(text: str) -> Iterator[tuple[int, int]]:
    """A passphrase or a wallet's seed, words in a row (see rules.PHRASE)."""
    for m in rules.PHRASE.finditer(text):
        if any(word.casefold() in rules.GAP_STOP for word in m.group("gap").split()):
            continue
        start, end = m.span("v")
        if text[start] in "\"'“«":  # quoted: the whole of it
            inside = text[start + 1:end - 1].strip()
            if len(inside) >= 3 and not rules.PLACEHOLDER.match(inside):
                yield start + 1, end - 1
            continue
        value = text[start:end].rstrip()
        words = value.casefold().split()
        if (len(words) >= rules.PHRASE_MIN_WORDS and words[0] not in rules.PHRASE_STOP
                and not (words[0] in rules.PHRASE_ARTICLES and words[1] in rules.PHRASE_AFTER_ARTICLE)
                and not (len(words) <= 6 and rules.PHRASE_DESCRIBES.intersection(words))):
            yield start, start + len(value)


def _luhn(digits: str) -> bool:
    total = 0
    for n, d in enumerate(reversed(digits)):
        value = int(d) * (2 if n % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _cards(text: str) -> Iterator[tuple[int, int]]:
    for m in rules.CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1:
            yield m.span()


def _encoded(text: str) -> Iterator[tuple[int, int]]:
    """Base64 tokens whose decoded text is, or holds, a credential ("user:password", a key, `password=...`)."""
    for m in rules.BASE64_TOKEN.finditer(text):
        token = m.group(0)
        if len(token) % 4:
            continue
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if not decoded.isprintable():
            continue
        if re.fullmatch(r"[^\s:]{1,64}:\S{3,}", decoded) or any(True for _ in _plain_spans(decoded)):
            yield m.span()


def _quoted_entropy(text: str) -> Iterator[tuple[int, int]]:
    """detect-secrets' entropy plugins on quoted strings (their own context rule), hashes and UUIDs left."""
    _, _, _, heuristic, base64_plugin, hex_plugin = _plugins()
    for m in rules.QUOTED.finditer(text):
        value = m.group(2)
        if rules.HEX_DIGEST.match(value) or heuristic.is_sequential_string(value):
            continue
        is_hex = all(c in "0123456789abcdefABCDEF" for c in value)
        plugin, limit = (hex_plugin, 3.0) if is_hex else (base64_plugin, 4.5)
        if plugin.calculate_shannon_entropy(value) > limit:
            yield m.span(2)


def _plain_spans(text: str) -> Iterator[tuple[int, int]]:
    yield from _formats(text)
    folded = text.casefold()
    if any(stem in folded for stem in rules.KEYWORD_STEMS):  # substring tests: far cheaper than the patterns
        yield from _keyword_plugin(text)
        yield from _assignments(text)
        yield from _sentences(text)
    if ("open" in folded or "unlock" in folded) and " with" in folded:  # a lock that opens with a code
        for m in rules.OPENS_WITH_CODE.finditer(text):
            if rules.OPENS_WITH.search(text, max(0, m.start() - 60), m.start()):  # a lock named just before
                yield m.span("v")
    if "disarm" in folded or "unlock" in folded or "open" in folded:  # a code said by what it does
        for m in rules.KEYED_IN.finditer(text):
            yield m.span("v" if m.group("v") else "w")
    if any(stem in folded for stem in rules.PHRASE_STEMS):
        yield from _phrases(text)
    if "://" in text:
        for m in rules.URL_USERINFO.finditer(text):
            if not rules.PLACEHOLDER.match(m.group("v")):
                yield m.span("v")
    yield from _cards(text)
    if "'" in text or '"' in text:
        yield from _quoted_entropy(text)


def _beside(text: str, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Where a text holds a credential, other key-like tokens in it are its pieces ("... and the rest is X")."""
    merged = _merge(spans)
    starts = [start for start, _ in merged]
    for m in rules.KEYLIKE_TOKEN.finditer(text):
        token = m.group(0).strip("=")
        if len(token) < 12 and not rules.SPLIT_CONTEXT.search(text, max(0, m.start() - 30), m.start()):
            continue  # a short piece only where the text says it is one
        if rules.HEX_DIGEST.match(token) or ("/" in token and len(token) < 30) or not looks_random(token):
            continue
        at = bisect.bisect_right(starts, m.start()) - 1
        if at < 0 or merged[at][1] < m.end():  # not inside a credential found already
            yield m.span()


def _visible(text: str) -> tuple[str, list[int] | None]:
    """`text` without invisible characters, and where each of its characters was in `text` (None: unchanged)."""
    if not rules.INVISIBLE.search(text):
        return text, None
    where = [i for i, ch in enumerate(text) if not rules.INVISIBLE.match(ch)]
    return "".join(text[i] for i in where), where


def _merge(spans: Iterable[tuple[int, int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def mask_secrets(text: str) -> tuple[str, int]:
    """`text` with every credential replaced by `[secret]`; returns (masked text, how many were masked)."""
    if not text or len(text) < 4:
        return text, 0
    clean, where = _visible(text)
    # a value that is (part of) `[secret]` was masked already: masking is idempotent
    spans = [(start, end) for start, end in (*_plain_spans(clean), *_encoded(clean)) if clean[start:end] not in SECRET]
    if not spans:
        return text, 0
    spans += _beside(clean, spans)
    merged = _merge(spans)
    if where is not None:  # back to positions in `text`, the invisible characters inside a secret with it
        merged = _merge((where[start], where[end - 1] + 1) for start, end in merged)
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
