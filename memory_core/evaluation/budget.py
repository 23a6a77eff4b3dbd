"""Who pays for an evaluation's LLM calls: one scope of the configured memory, under its daily token budget.

The evaluation runs in a temporary memory with no budget of its own, so every call it makes (the questions
answered and judged, the full-context ceiling, and in `pipeline` mode the memory's own extraction, summaries
and dreams) goes through `PaidChatModel`: reserved against the paying scope's `daily_token_budget` in the
configured memory's ledger before it is made, settled there after it (operation `eval`), and refused with
BudgetExceeded (no call made) once that scope's day is spent. The paying scope is `EVAL_SCOPE` unless the
caller names another (`memory-core eval --user U --agent A`)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from memory_core.errors import BudgetExceeded
from memory_core.policy.usage import Ledger, MeteredChatModel, metering
from memory_core.scope import Scope

if TYPE_CHECKING:
    from memory_core.llm.base import ChatModel, ChatResult

EVAL_SCOPE = Scope("eval", "default")
OPERATION = "eval"


class PaidChatModel:
    """A chat model whose every call is reserved against, and recorded for, one scope's budget in `ledger`.
    `refused` keeps the first refusal, for the callers (a context summary) that fall back instead of raising."""

    def __init__(self, inner: "ChatModel", ledger: Ledger, payer: Scope) -> None:
        self.metered = MeteredChatModel(inner, ledger)
        self.payer = payer
        self.model_name = getattr(inner, "model_name", "llm")
        self.refused: BudgetExceeded | None = None
        self.calls = 0
        self._lock = threading.Lock()  # the context tier summarises in its own thread

    def complete(self, messages: list[dict[str, str]], **options: Any) -> "ChatResult":
        """The inner model's answer; BudgetExceeded, and no call, when the payer's budget is spent today."""
        # Set here, around the call, rather than by the caller: the temporary memory names its own scope for
        # its work, and a summary runs in a thread of its own that would not see the caller's.
        with metering(self.payer, OPERATION):
            try:
                result = self.metered.complete(messages, **options)
            except BudgetExceeded as exc:
                with self._lock:
                    self.refused = self.refused or exc
                raise
        with self._lock:
            self.calls += 1
        return result

    def check(self) -> None:
        """BudgetExceeded when a call was refused (even one whose caller went on without it), or when the
        payer's budget is already spent."""
        if self.refused is not None:
            raise self.refused
        self.metered.ledger.check(self.payer)


def refusal(payer: Scope, calls: int, exc: BudgetExceeded) -> BudgetExceeded:
    """The refusal said for an evaluation: who pays, why it stopped, and that what was spent is recorded."""
    return BudgetExceeded(f"the evaluation's LLM calls are paid by {payer.key} and its daily budget is spent: "
                          f"{exc}; {calls} call(s) made before are in the ledger (operation {OPERATION!r}); "
                          "run it with --offline, another --user/--agent, or a larger daily_token_budget")
