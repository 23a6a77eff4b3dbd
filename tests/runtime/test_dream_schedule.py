"""The nightly dream's schedule (dream_schedule.DreamSchedule), given callables and no Memory: each scope once per
slot, within its caps; switched off, nothing is due."""

from datetime import datetime, timezone
from types import SimpleNamespace

from memory_core.runtime.dream_schedule import DreamParts, DreamSchedule
from memory_core.scope import Scope
from memory_core.settings import Settings


def test_dream_schedule_runs_each_scope_once_per_slot_within_its_caps(tmp_path):
    now = [datetime(2026, 1, 1, 2, 0, tzinfo=timezone.utc)]
    leases: set[str] = set()
    dreamt: list[Scope] = []
    ana, bob, cap = Scope("ana", "bot"), Scope("bob", "bot"), Scope("cap", "bot")
    settings = Settings(home=tmp_path, timezone="UTC", dream_schedule_time="03:00")

    def lease(name: str, until: datetime) -> bool:
        if name in leases:
            return False
        leases.add(name)
        return True

    schedule = DreamSchedule(settings, DreamParts(
        now=lambda: now[0], scopes=lambda: [ana, bob, cap], lease=lease,
        tokens_today=lambda s: settings.dream_daily_cost_cap_tokens if s == cap else 0,
        paused=lambda s: "budget spent" if s == bob else None,
        dream=lambda s: dreamt.append(s) or SimpleNamespace(status="updated")))
    assert schedule.due() == "not yet"
    assert schedule.next_dream() == datetime(2026, 1, 1, 3, 0, tzinfo=timezone.utc)
    now[0] = datetime(2026, 1, 1, 3, 30, tzinfo=timezone.utc)
    assert schedule.due() == "ana/bot=updated"
    assert schedule.due() == "nothing to do"  # every lease of this slot is taken
    assert dreamt == [ana]
    schedule.enabled = False
    assert schedule.due() == "disabled" and schedule.next_dream() is None


def test_a_dream_refused_by_the_budget_mid_run_leaves_the_other_scopes_to_dream(tmp_path):
    """Calls reserve their tokens as they run: a scope not paused when the slot began can be refused by the time
    its dream calls the LLM (BudgetExceeded); it waits, and the scopes after it still dream."""
    from memory_core.errors import BudgetExceeded

    now = datetime(2026, 1, 1, 3, 30, tzinfo=timezone.utc)
    ana, bob = Scope("ana", "bot"), Scope("bob", "bot")
    dreamt: list[Scope] = []
    settings = Settings(home=tmp_path, timezone="UTC", dream_schedule_time="03:00")

    def dream(scope: Scope):
        if scope == ana:
            raise BudgetExceeded("ana/bot has spent its daily_token_budget")
        dreamt.append(scope)
        return SimpleNamespace(status="updated")

    schedule = DreamSchedule(settings, DreamParts(now=lambda: now, scopes=lambda: [ana, bob], lease=lambda n, u: True,
                                                  tokens_today=lambda s: 0, paused=lambda s: None, dream=dream))
    assert schedule.due() == "bob/bot=updated" and dreamt == [bob]
