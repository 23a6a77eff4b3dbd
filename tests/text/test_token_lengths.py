"""The byte length of every token id (memory_core.text.tokens.token_byte_lengths), built from the ranks, is what
decoding each id gives, special tokens included: injection finds its cut points with it."""

from __future__ import annotations

import pytest

from memory_core.text.tokens import get_encoding, token_byte_lengths


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4"])
def test_every_token_ids_length_is_its_decoded_length(model):
    enc = get_encoding(model)
    lengths = token_byte_lengths(model)
    assert len(lengths) == enc.max_token_value + 1
    for rank in range(enc.max_token_value + 1):
        try:
            expected = len(enc.decode_single_token_bytes(rank))
        except KeyError:  # an id no token has
            expected = 0
        assert lengths[rank] == expected, rank
    assert lengths[enc.encode_single_token("<|endoftext|>")] == len("<|endoftext|>")
