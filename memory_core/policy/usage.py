"""What memory costs: every LLM and embedding call recorded in a ledger, and a daily token budget per scope.

The chat model and the embedder are wrapped once by the composition root (`Metered`); who pays for a call is
said by the caller around it (`metering(scope, "extract")`), so that no signature carries a scope. Counts are
the provider's reported usage where it reports one, else counted locally. Offline work records nothing.

The budget holds under concurrency: every chat call of a scope with a budget first reserves its estimate (the
input counted here plus its `max_tokens`, else `Settings.budget_reserve_output_tokens`) in the database, in one
transaction under the scope's budget lock, and is refused (BudgetExceeded) when what is spent and held already
reaches the budget; after the call the reservation is replaced by the usage the provider reported. So however
many calls run at once, in any thread or process, and whatever spends them (updates, the queue, context
summaries, rewrites after a correction, dreams), the day ends at most one call over the budget."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from memory_core.store.actors import current_actor
from memory_core.clock import utc
from memory_core.errors import BudgetExceeded
from memory_core.scope import make_scope
from memory_core.store.models import UsageRow
from memory_core.text.tokens import count_tokens

if TYPE_CHECKING:
    from memory_core.clock import Clock
    from memory_core.llm.base import ChatModel, ChatResult
    from memory_core.scope import Scope
    from memory_core.settings import Settings
    from memory_core.store.usage_store import UsageStore

log = logging.getLogger(__name__)

# A reservation older than this is of a call whose process died before settling it: it holds nothing any more.
HOLD = timedelta(hours=1)

_PAYER: ContextVar[tuple["Scope | None", str]] = ContextVar("memory_core_payer", default=(None, "other"))


@contextmanager
def metering(scope: "Scope | None", operation: str) -> Iterator[None]:
    """Calls made inside the block are recorded for `scope` and `operation` (in this thread or task)."""
    token = _PAYER.set((scope, operation))
    try:
        yield
    finally:
        _PAYER.reset(token)


def cost(prices: Mapping[str, Any] | None, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Dollars for a call from `{model: [input $ per 1M tokens, output $ per 1M]}`, None when the model has no price."""
    price = (prices or {}).get(model)
    if not isinstance(price, (list, tuple)) or len(price) != 2:
        return None
    return round((input_tokens * float(price[0]) + output_tokens * float(price[1])) / 1_000_000, 8)


@dataclass(frozen=True)
class Reservation:
    """Tokens one call holds against its scope's budget until it is settled (`pk` None: no budget to hold)."""

    pk: int | None
    scope: "Scope | None"
    operation: str


class Ledger:
    def __init__(self, store: "UsageStore", settings: "Settings", clock: "Clock") -> None:
        self.store = store
        self.settings = settings
        self.clock = clock

    def day(self, when: datetime | None = None) -> str:
        return (when or self.clock.now()).astimezone(self.settings.tz).date().isoformat()

    def _row(self, scope: "Scope | None", operation: str, model: str, input_tokens: int,
             output_tokens: int) -> UsageRow:
        now = self.clock.now()
        return UsageRow(at=now, day=self.day(now), user_id=scope.user_id if scope else None,
                        agent_name=scope.agent_name if scope else None, operation=operation[:32],
                        model=str(model)[:128], input_tokens=int(input_tokens), output_tokens=int(output_tokens),
                        cost_usd=cost(self.settings.llm_prices, model, input_tokens, output_tokens),
                        actor=current_actor())

    def record(self, model: str, input_tokens: int, output_tokens: int, operation: str | None = None) -> None:
        scope, default_operation = _PAYER.get()
        self.store.add(self._row(scope, operation or default_operation, model, input_tokens, output_tokens))

    def reserve(self, tokens: Callable[[], int]) -> Reservation:
        """Hold `tokens()` (asked only when there is a budget) against the daily budget of the scope paying now;
        BudgetExceeded (nothing held) when what it has spent and holds reaches the budget."""
        scope, operation = _PAYER.get()
        budget = self.settings.daily_token_budget
        if scope is None or budget is None:
            return Reservation(None, scope, operation)
        now = self.clock.now()
        pk, spent = self.store.reserve(scope, self.day(now), max(0, int(tokens())), int(budget), now, now - HOLD)
        if pk is None:
            raise BudgetExceeded(self._reason(scope, spent, int(budget)))
        return Reservation(pk, scope, operation)

    def settle(self, reservation: Reservation, model: str | None = None, input_tokens: int = 0,
               output_tokens: int = 0) -> None:
        """Replace the reservation by the call's usage (`model` None: the call failed and spent nothing)."""
        row = None if model is None else self._row(reservation.scope, reservation.operation, model, input_tokens,
                                                   output_tokens)
        if reservation.pk is None and row is None:
            return
        self.store.settle(reservation.pk, row)

    def spent_today(self, scope: "Scope") -> int:
        """Tokens the scope has spent today, with those its calls in flight hold."""
        now = self.clock.now()
        return self.store.spent(scope, self.day(now), held_since=now - HOLD)

    def paused(self, scope: "Scope") -> str | None:
        """Why the scope's LLM work waits (its budget is spent today), or None."""
        budget = self.settings.daily_token_budget
        if budget is None:
            return None
        spent = self.spent_today(scope)
        if spent < budget:
            return None
        return self._reason(scope, spent, budget)

    @staticmethod
    def _reason(scope: "Scope", spent: int, budget: int) -> str:
        return (f"{scope.key} has spent {spent:,} of its {budget:,} LLM tokens today (daily_token_budget); "
                "its LLM work waits until tomorrow or until the budget is raised")

    def check(self, scope: "Scope") -> None:
        """BudgetExceeded when the scope's daily budget is spent."""
        reason = self.paused(scope)
        if reason:
            raise BudgetExceeded(reason)


class MeteredChatModel:
    """A chat model whose every answered call goes into the ledger."""

    def __init__(self, llm: "ChatModel", ledger: Ledger) -> None:
        self.llm = llm
        self.ledger = ledger
        self.model_name = getattr(llm, "model_name", "llm")

    def __getattr__(self, name: str) -> Any:  # the adapter's own extras (formats, problems, ...)
        return getattr(self.llm, name)

    def complete(self, messages: list[dict[str, str]], **options: Any) -> "ChatResult":
        """The wrapped model's answer, its estimate reserved before (BudgetExceeded: no call is made) and its
        usage settled after."""
        def counted() -> int:
            return sum(count_tokens(str(m.get("content", ""))) for m in messages)

        answer = options.get("max_tokens") or self.ledger.settings.budget_reserve_output_tokens
        ticket = self.ledger.reserve(lambda: counted() + int(answer))
        try:
            result = self.llm.complete(messages, **options)
        except BaseException:
            self._settle(ticket)
            raise
        tin, tout = result.input_tokens, result.output_tokens
        if not tin and not tout:  # the server reported no usage: counted here
            tin, tout = counted(), count_tokens(result.text)
        self._settle(ticket, tin, tout)
        return result

    def _settle(self, ticket: Reservation, *usage: int) -> None:
        try:
            self.ledger.settle(ticket, self.model_name if usage else None, *usage)
        except Exception:  # noqa: BLE001 - a ledger that cannot write must not lose the answer
            log.exception("could not record the usage of a %s call", self.model_name)


class MeteredEmbedder:
    """An embedder (an API's, never the offline one) whose calls go into the ledger as `embed`."""

    def __init__(self, embedder: Any, ledger: Ledger) -> None:
        self.embedder = embedder
        self.ledger = ledger

    def __getattr__(self, name: str) -> Any:
        return getattr(self.embedder, name)

    def embed(self, texts: list[str], *args: Any, **kwargs: Any):
        vectors = self.embedder.embed(texts, *args, **kwargs)
        tokens = sum(count_tokens(t) for t in texts)  # the embedders report no usage: counted here
        try:
            self.ledger.record(getattr(self.embedder, "model_name", "embedder"), tokens, 0, operation="embed")
        except Exception:  # noqa: BLE001
            log.exception("could not record the usage of an embedding call")
        return vectors


def usage_records(store: "UsageStore", *, user_id: str | None = None, agent_name: str | None = None,
                  since: datetime | None = None) -> list:
    """Every recorded LLM and embedding call (of one user, agent or scope when given), newest first."""
    if user_id is not None:
        make_scope(user_id, agent_name or "default")  # ValueError for a malformed name
    if agent_name is not None:
        make_scope(user_id or "default", agent_name)
    return store.records(user_id=user_id, agent_name=agent_name, since=_since(since))


def usage_totals(store: "UsageStore", *, since: datetime | None = None) -> list:
    """Every recorded call since `since`, summed by day, scope, operation and model (all of them, however many)."""
    return store.totals(since=_since(since))


def _since(since: datetime | None) -> datetime | None:
    if since is not None and not isinstance(since, datetime):
        raise ValueError("since must be a datetime")
    return utc(since) if since is not None else None
