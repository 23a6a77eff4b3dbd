"""API tokens are verified from a short-lived cache (issue 35): no SQL per request, revocation at once in this
process and within Settings.token_cache_seconds (5 s by default) from another."""

from __future__ import annotations

from tests.conftest import make_memory


def counting_reads(memory) -> list:
    calls = []
    store = memory.access._store
    original = store.token_by_hash
    store.token_by_hash = lambda digest: calls.append(digest) or original(digest)
    return calls


def test_a_verified_token_is_served_from_memory_and_revoked_at_once(tmp_path, database_url):
    m = make_memory(tmp_path, database_url)
    try:
        token, secret = m.access.create_token("bot", user_id="ana")
        reads = counting_reads(m)
        for _ in range(5):
            assert m.access.verify_token(secret).id == token.id
        assert len(reads) == 1
        m.access.revoke_token(token.id)
        assert m.access.verify_token(secret) is None  # this process: at once, whatever the cache held
        assert m.access.verify_token("mc_made-up") is None
    finally:
        m.close()


def test_revocation_by_another_process_holds_within_the_ttl(tmp_path):
    m = make_memory(tmp_path)
    other = make_memory(tmp_path)  # the same database, as the CLI would open it
    try:
        token, secret = m.access.create_token("bot", user_id="ana")
        assert m.access.verify_token(secret).id == token.id
        other.access.revoke_token(token.id)
        assert m.access.verify_token(secret).id == token.id  # cached: good for at most the TTL
        m.settings.token_cache_seconds = 0.0  # as if the TTL had passed
        assert m.access.verify_token(secret) is None
    finally:
        other.close()
        m.close()
