"""What memory costs: the usage ledger (matching what the real OpenAI-compatible server reports), prices, the daily
token budget per scope (direct calls refused, queued work waiting and then done, nothing lost), and the record of
injections. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from memory_core import BudgetExceeded, ManualClock, Memory, ScriptedChatModel, Settings
from memory_core.search.embedders import HashingEmbedder
from memory_core.policy.usage import cost
from tests.conftest import make_memory
from tests.llm.test_llm_openai import CONVO, KEY, completion

GOOD = json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]})


def served_memory(tmp_path, httpserver, database_url=None, **settings):
    s = Settings(home=tmp_path / "h", database_url=database_url, llm_api_key=KEY, llm_model="gpt-4o-mini",
                 llm_base_url=httpserver.url_for("/v1"), llm_max_retries=0, llm_timeout_seconds=5, timezone="UTC",
                 embedding_model="wordllama", **settings)
    return Memory(s, embedder=HashingEmbedder(), clock=ManualClock(datetime(2026, 11, 22, 9, tzinfo=timezone.utc)))


def test_the_ledger_holds_what_the_server_reports(tmp_path, httpserver, database_url):
    httpserver.expect_request("/v1/chat/completions").respond_with_json(completion(GOOD))
    with served_memory(tmp_path, httpserver, database_url, llm_prices={"gpt-4o-mini": [0.15, 0.6]}) as m:
        with m.acting_as("dashboard:ana@acme.com"):
            m.update(CONVO, thread_id="t", user_id="ana", agent_name="coder")
        [record] = m.usage(user_id="ana", agent_name="coder")
        assert (record.operation, record.model, record.input_tokens, record.output_tokens) == \
            ("extract", "gpt-4o-mini", 11, 7)
        assert record.cost_usd == pytest.approx((11 * 0.15 + 7 * 0.6) / 1e6)
        assert record.actor == "dashboard:ana@acme.com"
        assert m.usage(user_id="bob") == []
        assert m.scoped(user_id="ana", agent_name="coder").usage()[0] == record


def test_offline_work_records_nothing(tmp_path):
    with make_memory(tmp_path) as m:
        m.update(CONVO, thread_id="t")
        m.daily.append("User: I like tea.")
        m.deep_dream(1)
        m.search("tea")
        assert m.usage() == []


def test_counts_are_made_here_when_the_server_reports_none(tmp_path):
    llm = ScriptedChatModel(default=GOOD)
    llm.complete = (lambda inner: lambda messages, **kw: type(inner(messages, **kw))(inner(messages, **kw).text))(
        llm.complete)  # a model that reports no usage
    with make_memory(tmp_path, llm=llm) as m:
        m.update(CONVO, thread_id="t")
        [record] = m.usage()
        assert record.input_tokens > 0 and record.output_tokens > 0 and record.cost_usd is None


def test_cost_table():
    assert cost({"m": [1.0, 2.0]}, "m", 1_000_000, 500_000) == 2.0
    assert cost({"m": [1.0, 2.0]}, "other", 10, 10) is None and cost(None, "m", 1, 1) is None


def test_a_spent_budget_stops_one_scope_and_not_another_and_waits_for_a_raise(tmp_path, database_url):
    clock = ManualClock(datetime(2026, 11, 22, 9, tzinfo=timezone.utc))
    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, database_url, llm=llm, clock=clock, daily_token_budget=1,
                     debounce_seconds=0, rate_limit_seconds=0) as m:
        m.update(CONVO, thread_id="t1", user_id="ana")  # spends past the budget of 1 token
        calls = llm.calls
        with pytest.raises(BudgetExceeded, match="daily_token_budget"):
            m.update([{"role": "user", "content": "I like coffee."}], thread_id="t2", user_id="ana")
        with pytest.raises(BudgetExceeded):
            m.deep_dream(1, user_id="ana")
        assert llm.calls == calls and [f.content for f in m.facts.list(user_id="ana")] == ["User prefers tea"]
        assert "ana/default" in m.status().budget_paused and m.budget_paused(user_id="ana")
        m.update(CONVO, thread_id="t1", user_id="bob")  # another scope goes on
        m.queue.add([{"role": "user", "content": "I like coffee."}], thread_id="t3", user_id="ana")
        m.queue.flush()
        [waiting] = m.queue.items()
        assert waiting.status == "pending" and waiting.attempts == 0 and "daily_token_budget" in waiting.last_error
        m.settings.daily_token_budget = 10**9  # raised
        clock.advance(600)
        m.queue.flush()
        assert m.queue.pending() == 0 and llm.calls == calls + 2


def test_the_budget_is_a_day_long(tmp_path):
    clock = ManualClock(datetime(2026, 11, 22, 9, tzinfo=timezone.utc))
    with make_memory(tmp_path, llm=ScriptedChatModel(default=GOOD), clock=clock, daily_token_budget=1) as m:
        m.update(CONVO, thread_id="t1")
        with pytest.raises(BudgetExceeded):
            m.update(CONVO, thread_id="t2")
        clock.advance(86_400)
        m.update(CONVO, thread_id="t2")


def test_injections_are_recorded_when_asked(tmp_path, database_url):
    with make_memory(tmp_path, database_url) as m:
        tea = m.facts.add("User prefers tea", "preference", 0.9)
        m.facts.add("User lives in Porto", "context", 0.8)
        m.format_for_injection()
        assert m.injections() == []
        with m.acting_as("mcp:ci-bot"):
            m.format_for_injection(query="what does the user drink", max_tokens=500, record=True)
        [seen] = m.injections()
        assert seen.actor == "mcp:ci-bot" and seen.query == "what does the user drink" and seen.tokens > 0
        assert tea.id in seen.fact_ids
        assert m.injection_counts()[tea.id][0] == 1
        assert m.scoped(user_id="default", agent_name="default").injections(limit=5) == [seen]
        assert m.injections(user_id="bob") == []
        with pytest.raises(ValueError):
            m.injections(limit=0)


def test_injection_counts_are_counted_by_the_database_over_the_latest_injections(tmp_path, database_url):
    """How often each fact went in and when last, over the scope's latest INJECTION_WINDOW recorded injections (the
    Facts page's column; an agent asking on every turn records thousands a day), counted where the rows are."""
    from datetime import datetime, timedelta, timezone

    from memory_core.store import usage_store
    from memory_core.store.usage_store import UsageStore

    with make_memory(tmp_path, database_url) as m:
        ledger = UsageStore(m.db)
        scope, other = m.scoped().scope, m.scoped(user_id="bob").scope
        start = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
        for n in range(6):  # tea in each, jazz in the first three, a fact of the 'and' kind once
            ids = ["fact_tea"] + (["fact_jazz"] if n < 3 else []) + (["fact_a\"b"] if n == 4 else [])
            ledger.add_injection(scope, start + timedelta(hours=n), "agent", "q", 100, 500, ids)
        ledger.add_injection(other, start + timedelta(days=9), "agent", "q", 100, 500, ["fact_tea"])
        counts = ledger.injection_counts(scope)
        assert counts == {"fact_tea": (6, start + timedelta(hours=5)), "fact_jazz": (3, start + timedelta(hours=2)),
                          'fact_a\"b': (1, start + timedelta(hours=4))}
        assert all(at.tzinfo is not None for _n, at in counts.values())
        assert ledger.injection_counts(scope, window=3) == {"fact_tea": (3, start + timedelta(hours=5)),
                                                            'fact_a\"b': (1, start + timedelta(hours=4))}
        assert usage_store.INJECTION_WINDOW == 10_000 and m.injection_counts(user_id="nobody") == {}


def test_usage_totals_sum_every_call_in_the_database(tmp_path, database_url):
    """The Usage page and `memory-core usage` read sums by day, scope, operation and model: every call since the
    day asked, however many (the records themselves are read at most 10,000 at a time)."""
    from datetime import timedelta

    from memory_core.store.models import UsageRow
    from memory_core.store.usage_store import UsageTotal

    start = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

    def row(n: int, day: int, user: str | None, operation: str, cost: float | None) -> dict:
        return dict(at=start + timedelta(days=day, seconds=n), day=f"2026-03-0{day + 1}", user_id=user,
                    agent_name="bot" if user else None, operation=operation, model="m", input_tokens=3,
                    output_tokens=1 if operation != "embed" else 0, cost_usd=cost, actor=None)

    with make_memory(tmp_path, database_url) as m:
        m.db.ensure_ready()
        rows = [row(n, 0, "ana", "embed", None) for n in range(10_050)]
        rows += [row(n, 1, "ana", "extract", 0.25) for n in range(3)] + [row(0, 1, "ana", "extract", None)]
        rows += [row(0, 1, "bob", "dream", 1.0), row(1, 1, None, "embed", None)]
        with m.db.engine.begin() as conn:
            conn.execute(UsageRow.__table__.insert(), rows)
        assert len(m.admin.usage()) == 10_000  # the records: a bounded read
        assert set(m.admin.usage_totals()) == {  # (in no promised order: the databases sort no scope differently)
            UsageTotal("2026-03-01", "ana", "bot", "embed", "m", 10_050, 30_150, 0, None),
            UsageTotal("2026-03-02", None, None, "embed", "m", 1, 3, 0, None),
            UsageTotal("2026-03-02", "ana", "bot", "extract", "m", 4, 12, 4, 0.75),
            UsageTotal("2026-03-02", "bob", "bot", "dream", "m", 1, 3, 1, 1.0)}
        assert sorted(t.calls for t in m.admin.usage_totals(since=start + timedelta(days=1))) == [1, 1, 4]
        with pytest.raises(ValueError, match="since"):
            m.admin.usage_totals(since="yesterday")


def test_a_scopes_tokens_spent_today_are_the_budgets_count(tmp_path, database_url):
    """The Overview page's "LLM tokens spent today": the LLM calls of the scope's day (in `timezone`), embeddings
    left out, summed by the database as the daily budget counts them (it summed the newest records read)."""
    from memory_core.store.models import UsageRow

    clock = ManualClock(datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc))
    with make_memory(tmp_path, database_url, clock=clock) as m:
        m.db.ensure_ready()
        at = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
        rows = [dict(at=at, day="2026-03-02", user_id="ana", agent_name="bot", operation=op, model="m",
                     input_tokens=given, output_tokens=taken, cost_usd=None, actor=None)
                for op, given, taken in (("extract", 10, 5), ("embed", 100, 0), ("dream", 1, 1))]
        rows += [{**rows[0], "day": "2026-03-01"}, {**rows[0], "user_id": "bob"}]
        with m.db.engine.begin() as conn:
            conn.execute(UsageRow.__table__.insert(), rows)
        assert m.scoped(user_id="ana", agent_name="bot").spent_today() == 17
        assert m.scoped(user_id="carol", agent_name="bot").spent_today() == 0


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_usage_command_sums_per_scope_and_operation(tmp_path, httpserver):
    from tests.cli.test_cli import cli_env, refused, run

    httpserver.expect_request("/v1/chat/completions").respond_with_json(completion(GOOD))
    with served_memory(tmp_path, httpserver, llm_prices={"gpt-4o-mini": [0.15, 0.6]}) as m:
        m.update(CONVO, thread_id="t1", user_id="ana", agent_name="coder")
        m.update(CONVO, thread_id="t2", user_id="ana", agent_name="coder")
    env = cli_env(tmp_path / "h")
    done = run(env, "usage", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"scope": "ana/coder", "operation": "extract", "calls": 2, "input_tokens": 22,
                                        "output_tokens": 14, "cost_usd": round((22 * 0.15 + 14 * 0.6) / 1e6, 6)}]
    table = run(env, "usage", "--since", "2026-11-23")
    assert "No LLM or embedding calls recorded since 2026-11-23." in table.stdout
    assert "--since takes a day" in refused(env, "usage", "--since", "yesterday")
