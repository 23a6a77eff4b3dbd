"""`memory-core eval`: how well memory finds and injects what questions about a conversation need.

Conversations in LoCoMo's format go into a fresh temporary memory, in each mode (modes.py), and every
answerable question (categories 1-4) is asked:
- `recall@k`: the share of the question's evidence turns that the top-k search hits find (averaged over the
  questions that have evidence);
- `answer_in_context`: the share of questions whose answer's content words (stemmed; dates recognised however
  written, matching.py) all appear in `format_for_injection(query=question)` at the budget (the settings' default
  unless `max_tokens` is given): what an agent would actually be shown; beside it the mean and the largest
  number of tokens injected;
- with an LLM configured, `qa_accuracy`: the model answers from that text and judges its answer against the
  gold one (judge.py), and the tokens that took; and, as the ceiling, `full_context_accuracy`: the same model
  answering from the whole conversation (every session, dated), with its tokens. Every one of those LLM calls
  is paid by one scope of the configured memory (`EVAL_SCOPE` unless named): reserved against its daily token
  budget before it is made and recorded in its ledger (budget.py); BudgetExceeded stops the run.
"""

from __future__ import annotations

import dataclasses
import logging
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from memory_core.clock import ManualClock
from memory_core.errors import BudgetExceeded
from memory_core.llm.base import ChatModel, ChatResult
from memory_core.scope import Scope, make_scope
from memory_core.settings import Settings
from memory_core.text.dates import day_text
from memory_core.text.tokens import count_tokens
from memory_core.evaluation.budget import EVAL_SCOPE, PaidChatModel, refusal
from memory_core.evaluation.judge import answer_and_judge
from memory_core.evaluation.matching import answer_in_context
from memory_core.evaluation.locomo import ANSWERABLE, CATEGORIES, UNDATED, Question, Sample, load_samples, parse_samples
from memory_core.evaluation.modes import MODES, TurnFinder, feed_sessions, scope_user, store_turns

log = logging.getLogger(__name__)

__all__ = ["run_eval", "format_report", "load_samples", "parse_samples", "store_turns", "scope_user",
           "answerable", "answer_in_context", "MODES", "EVAL_SCOPE"]


def answerable(samples: list[Sample]) -> list[Question]:
    """The questions every figure is over: categories 1-4 (5 is adversarial: unanswerable by design)."""
    return [q for s in samples for q in s.questions if q.category in ANSWERABLE]


def full_context(sample: Sample) -> str:
    """The whole conversation as a full-context reader gets it: each session under its date, each turn named."""
    return "\n\n".join(f"[{day_text(s.when)}]\n" + "\n".join(f"{t.speaker}: {t.text}" for t in s.turns)
                       for s in sample.sessions)


def _eval_settings(settings: Settings, home: Path, offline: bool, max_facts: int) -> Settings:
    """The caller's settings (model, embedder, budget, thresholds) on a fresh SQLite workspace in `home`."""
    names = {f.name for f in dataclasses.fields(settings)}
    changes: dict[str, Any] = {"home": home, "database_url": f"sqlite:///{home / 'memory.db'}", "timezone": "UTC",
                               "document_store": "files", "enabled": True, "dream_schedule_enabled": False,
                               "max_facts": max(settings.max_facts, max_facts), "dream_review": False,
                               "daily_token_budget": None}
    if offline:  # "" (not None): the environment's OPENAI_* must not switch the LLM back on
        changes.update(llm_api_key="", llm_base_url="")
    return dataclasses.replace(settings, **{k: v for k, v in changes.items() if k in names})


class CountingChatModel:
    """A chat model that adds up the tokens of every call made through it."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.input_tokens = 0
        self.output_tokens = 0
        self._lock = threading.Lock()  # the context tier summarises in its own thread

    def complete(self, messages: list[dict[str, str]], **options: Any) -> ChatResult:
        result = self.inner.complete(messages, **options)
        with self._lock:
            self.input_tokens += result.input_tokens
            self.output_tokens += result.output_tokens
        return result


def _chat_model(settings: Settings) -> ChatModel:
    from memory_core.llm.openai_chat import OpenAIChatModel

    return OpenAIChatModel(settings.llm_model, api_key=settings.llm_api_key, base_url=settings.llm_base_url,
                           timeout=settings.llm_timeout_seconds, max_retries=settings.llm_max_retries)


def run_eval(samples: list[Sample], settings: Settings, *, k: int = 10, modes: Iterable[str] = MODES,
             offline: bool = False, embedder: Any = None, max_tokens: int | None = None,
             llm: ChatModel | None = None, payer: Scope | None = None) -> dict[str, Any]:
    """Run every mode on `samples` and return the report (see `format_report`); LLMError if the LLM fails.
    `offline`: leave the configured LLM out; `embedder`: another than the settings choose (tests); `max_tokens`:
    the injection budget (default the settings'); `llm`: another chat model than the settings' (tests);
    `payer`: the scope of the configured memory whose daily budget and ledger every LLM call is under
    (default `EVAL_SCOPE`); BudgetExceeded, before any more calls, once its budget is spent (budget.py)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError("k must be a positive integer")
    budget = settings.max_injection_tokens if max_tokens is None else max_tokens
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError("max_tokens must be a positive integer")
    modes = list(modes)
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"modes must be among {', '.join(MODES)}")
    payer = EVAL_SCOPE if payer is None else make_scope(*payer)
    offline = (offline or settings.offline) and llm is None
    if offline:
        return _run(samples, settings, k, modes, budget, embedder, None)
    from memory_core.memory import Memory

    home = Memory(settings, worker=False)  # its ledger only: the evaluation never touches its memory
    try:
        paid = PaidChatModel(llm or _chat_model(settings), home.ledger, payer)
        try:
            paid.check()  # spent already: refused before the work that would lead up to the first call
            return _run(samples, settings, k, modes, budget, embedder, paid)
        except BudgetExceeded as exc:
            raise refusal(payer, paid.calls, exc) from None
    finally:
        home.close(flush=False)


def _run(samples: list[Sample], settings: Settings, k: int, modes: list[str], budget: int, embedder: Any,
         paid: PaidChatModel | None) -> dict[str, Any]:
    from memory_core.memory import Memory

    questions = answerable(samples)
    turns = sum(len(s.turns) for sample in samples for s in sample.sessions)
    report: dict[str, Any] = {"questions": len(questions), "k": k, "samples": len(samples), "max_tokens": budget,
                              "llm": None if paid is None else paid.model_name, "modes": {}}
    for mode in modes:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="memory-core-eval-") as tmp:
            clock = ManualClock(UNDATED)
            eval_settings = _eval_settings(settings, Path(tmp), paid is None, turns + 10_000)
            model = None if paid is None else CountingChatModel(paid)
            memory = Memory(eval_settings, llm=model, clock=clock, embedder=embedder, worker=False)
            try:
                if mode == "turns":
                    built: dict[str, Any] = {"facts": store_turns(memory, samples)}
                else:
                    stats = feed_sessions(memory, clock, samples)
                    if paid is not None:  # a summary refused falls back offline: the run stops all the same
                        paid.check()
                    built = {"facts": stats.facts, "daily_blocks": stats.daily_blocks,
                             "dreams_updated": stats.dreams_updated}
                    if model is not None:  # extraction, summaries and dreams: every call the memory made
                        built["memory_tokens"] = {"input": model.input_tokens, "output": model.output_tokens}
                    if stats.errors:
                        built["errors"] = stats.errors[:10]
                spent = (model.input_tokens, model.output_tokens) if model is not None else (0, 0)
                result = _ask(memory, samples, questions, mode, k, llm=model, max_tokens=budget)
                if model is not None and eval_settings.llm_rerank:  # the memory's own calls while it was asked
                    qa = result.get("qa_tokens", {"input": 0, "output": 0})
                    result["rerank_tokens"] = {"input": model.input_tokens - spent[0] - qa["input"],
                                               "output": model.output_tokens - spent[1] - qa["output"]}
            finally:
                memory.close()
        result.update(built)
        result["seconds"] = round(time.perf_counter() - started, 1)
        report["modes"][mode] = result
    if paid is not None:
        report["full_context"] = _full_context(samples, questions, paid)
    return report


def _full_context(samples: list[Sample], questions: list[Question], chat: ChatModel) -> dict[str, Any]:
    """The ceiling: the same model answering each question from the whole conversation."""
    counted = CountingChatModel(chat)
    texts = [full_context(s) for s in samples]
    rows, sizes = [], []
    for q in questions:
        if not q.answer.strip():
            continue
        sizes.append(count_tokens(texts[q.sample]))
        rows.append((q.category, answer_and_judge(counted, texts[q.sample], q.question, q.answer).correct))
    return {"qa_accuracy": _mean([r[1] for r in rows]), "mean_tokens": _mean(sizes), "max_tokens": max(sizes, default=0),
            "qa_tokens": {"input": counted.input_tokens, "output": counted.output_tokens},
            "by_category": {str(c): _mean([r[1] for r in rows if r[0] == c]) for c in ANSWERABLE
                            if any(r[0] == c for r in rows)}}


def _ask(memory: Any, samples: list[Sample], questions: list[Question], mode: str, k: int,
         llm: Any, max_tokens: int) -> dict[str, Any]:
    finder = TurnFinder(mode, samples)
    rows: list[tuple] = []  # category, recall, in context, correct, tokens injected
    tokens = {"input": 0, "output": 0}
    for q in questions:
        user = scope_user(q.sample)
        recall = None
        if q.evidence:
            found: set[str] = set()
            for hit in memory.search(q.question, k=k, user_id=user):
                found |= finder.found(q.sample, hit, q.evidence)
            recall = len(found) / len(q.evidence)
        text = memory.format_for_injection(user_id=user, query=q.question, max_tokens=max_tokens)
        correct = None
        if llm is not None and q.answer.strip():
            verdict = answer_and_judge(llm, text, q.question, q.answer)
            correct = verdict.correct
            tokens["input"] += verdict.input_tokens
            tokens["output"] += verdict.output_tokens
        rows.append((q.category, recall, answer_in_context(q.answer, text), correct, count_tokens(text)))
    result = _figures(rows, k)
    result["by_category"] = {str(c): {"name": CATEGORIES[c], **_figures([r for r in rows if r[0] == c], k)}
                             for c in ANSWERABLE if any(r[0] == c for r in rows)}
    if llm is not None:
        result["qa_tokens"] = tokens
    return result


def _mean(values: list[Any]) -> float | None:
    values = [float(v) for v in values if v is not None]
    return round(statistics.mean(values), 4) if values else None


def _figures(rows: list[tuple], k: int) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(rows), f"recall@{k}": _mean([r[1] for r in rows]),
                           "answer_in_context": _mean([r[2] for r in rows]),
                           "mean_tokens": round(statistics.mean([r[4] for r in rows]), 1) if rows else None,
                           "max_tokens": max((r[4] for r in rows), default=None)}
    if any(r[3] is not None for r in rows):
        out["qa_accuracy"] = _mean([r[3] for r in rows])
    return out


def format_report(report: dict[str, Any]) -> str:
    """The report as a table: one row per category and overall, the modes side by side."""
    k = report["k"]
    modes = list(report["modes"])
    qa = any("qa_accuracy" in m for m in report["modes"].values())
    columns = [f"recall@{k}", "answer_in_context"] + (["qa_accuracy"] if qa else []) + ["mean_tokens", "max_tokens"]
    short = {f"recall@{k}": f"recall@{k}", "answer_in_context": "in context", "qa_accuracy": "QA acc.",
             "mean_tokens": "tokens", "max_tokens": "max tok."}

    def cell(figures: dict[str, Any], c: str) -> str:
        value = figures.get(c)
        if value is None:
            return f"{'-':>11}"
        return f"{value:>11.0f}" if c in ("mean_tokens", "max_tokens") else f"{value:>11.3f}"

    def cells(figures: dict[str, Any]) -> str:
        return "".join(cell(figures, c) for c in columns)

    lines = [f"{report['questions']} questions (categories 1-4) in {report['samples']} conversation(s); "
             f"LLM: {report['llm'] or 'none (offline)'}; budget {report.get('max_tokens', '-')} tokens",
             f"{'':<18}{'':>5}" + "".join(f"{m:^{11 * len(columns)}}" for m in modes),
             f"{'category':<18}{'n':>5}" + "".join(f"{short[c]:>11}" for c in columns) * len(modes)]
    first = report["modes"][modes[0]]
    for key, figures in first["by_category"].items():
        label = f"{key} {figures['name']}"
        lines.append(f"{label:<18}{figures['questions']:>5}"
                     + "".join(cells(report["modes"][m]["by_category"].get(key, {})) for m in modes))
    lines.append(f"{'all':<18}{report['questions']:>5}" + "".join(cells(report["modes"][m]) for m in modes))
    for mode in modes:
        m = report["modes"][mode]
        built = ", ".join(f"{key.replace('_', ' ')} {m[key]}" for key in ("facts", "daily_blocks", "dreams_updated")
                          if key in m)
        spent = [f"{what} {m[key]['input']:,} in / {m[key]['output']:,} out"
                 for key, what in (("memory_tokens", "memory LLM tokens"), ("rerank_tokens", "rerank tokens"),
                                   ("qa_tokens", "QA tokens")) if key in m]
        lines.append(f"{mode}: {built}; {m['seconds']} s" + (f"; {'; '.join(spent)}" if spent else ""))
    if full := report.get("full_context"):
        per = ", ".join(f"{CATEGORIES[int(c)]} {v:.3f}" for c, v in full["by_category"].items() if v is not None)
        lines.append(f"full context (the whole conversation in the prompt): QA acc. "
                     f"{'-' if full['qa_accuracy'] is None else format(full['qa_accuracy'], '.3f')} ({per}); "
                     f"{full['mean_tokens']:.0f} tokens a question on average, at most {full['max_tokens']:,}; "
                     f"QA tokens {full['qa_tokens']['input']:,} in / {full['qa_tokens']['output']:,} out")
    return "\n".join(lines)
