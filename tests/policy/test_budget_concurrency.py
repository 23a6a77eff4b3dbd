"""The daily token budget holds under concurrency (API.md "Limits that hold under concurrency"): every LLM call
reserves its estimate before it is made and settles to the reported usage after, in the database, so that 16
updates at once (threads), or 4 processes sharing the database, on a nearly spent budget go over it by at most
one call; and every LLM call counts against it (context summaries and rewrites after a correction make no call
once it is spent). SQLite and PostgreSQL."""

from __future__ import annotations

import json
import threading

import pytest

from memory_core import BudgetExceeded, ManualClock, ScriptedChatModel
from tests.conftest import make_memory

GOOD = json.dumps({"facts": [{"content": "User prefers tea", "category": "preference", "confidence": 0.9}]})
N = 16


def spent_today(m, user_id: str = "ana") -> tuple[int, int]:
    """(tokens spent today by ana/default, the most one call spent) from the ledger."""
    rows = [r for r in m.usage(user_id=user_id, agent_name="default") if r.operation != "embed"]
    return sum(r.input_tokens + r.output_tokens for r in rows), max(r.input_tokens + r.output_tokens for r in rows)


def test_sixteen_updates_at_once_on_a_nearly_spent_budget_go_over_by_at_most_one_call(tmp_path, database_url):
    arrived = {"n": 0}
    changed = threading.Condition()
    in_call = threading.local()

    def arrive() -> None:
        with changed:
            arrived["n"] += 1
            changed.notify_all()

    def answer(messages):
        """Holds every call until each of the 16 updates is either inside a call too or finished: the old
        read-then-call check let all 16 in; reservations let one in and refuse the others at once."""
        in_call.yes = True
        arrive()
        with changed:
            assert changed.wait_for(lambda: arrived["n"] >= N, timeout=120), "the updates never all got this far"
        return GOOD

    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, database_url, llm=llm, clock=ManualClock()) as m:
        m.update([{"role": "user", "content": "I like green tea in the morning."}], thread_id="t0", user_id="ana")
        before, one_call = spent_today(m)
        m.settings.daily_token_budget = before + 1  # nearly spent: one token left
        facts_before = len(m.facts.list(user_id="ana"))
        llm._default = answer
        start = threading.Barrier(N)
        outcomes: list[str] = []

        def worker(i: int) -> None:
            in_call.yes = False
            start.wait()
            try:
                m.update([{"role": "user", "content": f"Fact number {i}: I keep {i} plants at home."}],
                         thread_id=f"t{i + 1}", user_id="ana")
                outcomes.append("done")
            except BudgetExceeded:
                outcomes.append("refused")
            finally:
                if not in_call.yes:
                    arrive()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(N)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        assert sorted(outcomes) == ["done"] + ["refused"] * (N - 1)
        spent, one_call = spent_today(m)
        assert spent <= m.settings.daily_token_budget + one_call  # at most one call over
        assert llm.calls == 2  # the first update and the one let in
        assert len(m.facts.list(user_id="ana")) <= facts_before + 1  # the refused ones changed nothing
        assert m.budget_paused(user_id="ana")
        with m.db.read() as s:  # every reservation was settled
            from sqlalchemy import text
            assert s.execute(text("SELECT COUNT(*) FROM budget_reservations")).scalar() == 0


def test_context_summaries_rewrites_and_dreams_make_no_call_once_the_budget_is_spent(tmp_path, database_url):
    llm = ScriptedChatModel(default=GOOD)
    clock = ManualClock()
    with make_memory(tmp_path, database_url, llm=llm, clock=clock) as m:
        ana = m.scoped(user_id="ana")
        acme = ana.facts.add("User works at Acme", "context", 0.9)
        ana.set_summaries({"workContext": "User works at Acme. User writes Rust."})
        ana.update([{"role": "user", "content": "I like green tea."}], thread_id="t0")  # spends
        m.settings.daily_token_budget = 1
        calls, usage = llm.calls, len(m.usage())

        session = ana.context("s1")  # a context session's summary of what it trims
        for i in range(6):
            session.add("user", f"I like topic number {i} very much indeed.")
            session.add("assistant", f"Noted topic {i}.")
        session.trim()
        m.contexts.wait()
        assert "topic" in (ana.daily.read(clock.now().date()) or "")  # summarised offline: nothing lost

        ana.facts.invalidate(acme.id)  # a correction: its summaries are rewritten without the LLM
        assert "Acme" not in ana.memory_data()["user"]["workContext"]["summary"]

        ana.daily.append("User: I moved to Porto.")
        with pytest.raises(BudgetExceeded):
            ana.deep_dream(1)
        with pytest.raises(BudgetExceeded):
            ana.update([{"role": "user", "content": "I like black coffee."}], thread_id="t1")
        assert llm.calls == calls and len(m.usage()) == usage  # not one LLM call more
        assert m.budget_paused(user_id="bob") is None  # other scopes are not held


def _update_in_a_process(database_url, home, budget, i, arrived, changed, outcomes) -> None:
    """One process's update on the shared database, its LLM call held like the threads' above."""
    from memory_core import Memory, Settings
    from memory_core.search.embedders import HashingEmbedder

    def answer(messages):
        with changed:
            arrived.value += 1
            changed.notify_all()
            changed.wait_for(lambda: arrived.value >= PROCESSES, timeout=120)
        return GOOD

    settings = Settings(home=home, database_url=database_url, timezone="UTC", llm_api_key=None, llm_base_url=None,
                        daily_token_budget=budget)
    with Memory(settings, llm=ScriptedChatModel(default=answer), embedder=HashingEmbedder()) as m:
        try:
            m.update([{"role": "user", "content": f"I keep {i} plants at home."}], thread_id=f"p{i}", user_id="ana")
            outcomes.put("done")
        except BudgetExceeded:
            outcomes.put("refused")
            with changed:
                arrived.value += 1
                changed.notify_all()


PROCESSES = 4


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_processes_sharing_a_database_go_over_by_at_most_one_call(tmp_path, database_url):
    import multiprocessing

    llm = ScriptedChatModel(default=GOOD)
    with make_memory(tmp_path, database_url, llm=llm) as m:
        m.update([{"role": "user", "content": "I like green tea in the morning."}], thread_id="t0", user_id="ana")
        before, _ = spent_today(m)
    ctx = multiprocessing.get_context("spawn")
    arrived, changed, outcomes = ctx.Value("i", 0), ctx.Condition(), ctx.Queue()
    url = database_url  # each process opens the same database (the test's own memory is closed), on the same
    # system clock: the same day
    procs = [ctx.Process(target=_update_in_a_process,
                         args=(url, tmp_path / f"home{i}", before + 1, i, arrived, changed, outcomes))
             for i in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    assert sorted(outcomes.get(timeout=5) for _ in range(PROCESSES)) == ["done"] + ["refused"] * (PROCESSES - 1)
    with make_memory(tmp_path, database_url, llm=llm) as m:
        spent, one_call = spent_today(m)
        assert spent <= before + 1 + one_call
