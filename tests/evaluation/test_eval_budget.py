"""`memory-core eval` with an LLM spends under a scope's daily token budget: every call (questions answered and
judged, the full-context ceiling, the pipeline's own extraction, summaries and dreams) is reserved against the
paying scope of the configured memory before it is made and recorded in its ledger; once that scope's day is
spent the run stops with a clear refusal and no further call. In process with the scripted chat model, and the
command in a subprocess against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from werkzeug import Response

from memory_core import Memory, Settings
from memory_core.errors import BudgetExceeded
from memory_core.evaluation import EVAL_SCOPE, load_samples, run_eval
from memory_core.llm.scripted import ScriptedChatModel
from memory_core.scope import Scope
from memory_core.search.embedders import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "locomo_tiny.json"


def reply(messages: list[dict[str, str]]) -> str:
    """The judge says CORRECT, every other call gets a short answer or an empty extraction."""
    system = messages[0]["content"]
    if system.startswith("Your task is to label an answer"):
        return json.dumps({"label": "CORRECT"})
    if system.startswith("You answer questions about people"):
        return "teal"
    return json.dumps({"facts": []})


def eval_rows(home: Path, scope: Scope = EVAL_SCOPE) -> list:
    with Memory(Settings(home=home, llm_api_key="", llm_base_url=""), worker=False) as m:
        return [r for r in m.usage(user_id=scope.user_id, agent_name=scope.agent_name) if r.operation == "eval"]


def run(home: Path, llm: ScriptedChatModel, budget: int | None, modes=("turns",), payer: Scope | None = None):
    return run_eval(load_samples(TINY), Settings(home=home, daily_token_budget=budget), k=3, modes=list(modes),
                    embedder=HashingEmbedder(), llm=llm, payer=payer)


def test_every_eval_call_is_recorded_for_the_paying_scope(tmp_path):
    llm = ScriptedChatModel(default=reply)
    report = run(tmp_path / "h", llm, None)
    assert report["modes"]["turns"]["qa_accuracy"] == 1.0 and report["full_context"]["qa_accuracy"] == 1.0
    rows = eval_rows(tmp_path / "h")
    assert len(rows) == llm.calls == 8 * 2 * 2  # 8 questions answered and judged, in turns mode and full context
    assert {(r.user_id, r.agent_name, r.model) for r in rows} == {("eval", "default", "scripted")}
    assert sum(r.input_tokens for r in rows) == (report["modes"]["turns"]["qa_tokens"]["input"]
                                                 + report["full_context"]["qa_tokens"]["input"])


def test_a_spent_budget_stops_the_run_within_one_call(tmp_path):
    measured = ScriptedChatModel(default=reply)
    run(tmp_path / "free", measured, None)
    whole = sum(r.input_tokens + r.output_tokens for r in eval_rows(tmp_path / "free"))
    budget = whole // 3

    llm = ScriptedChatModel(default=reply)
    with pytest.raises(BudgetExceeded) as refused:
        run(tmp_path / "h", llm, budget)
    said = str(refused.value)
    assert "paid by eval/default" in said and "daily_token_budget" in said and "--offline" in said
    assert 0 < llm.calls < measured.calls
    rows = eval_rows(tmp_path / "h")
    assert len(rows) == llm.calls and f"{llm.calls} call(s) made before are in the ledger" in said
    spent = sum(r.input_tokens + r.output_tokens for r in rows)
    largest = max(r.input_tokens + r.output_tokens for r in rows)
    assert budget <= spent <= budget + largest  # over by at most the one call that was let through

    again = ScriptedChatModel(default=reply)  # the day is spent: refused before anything is built or asked
    with pytest.raises(BudgetExceeded, match="0 call\\(s\\) made before"):
        run(tmp_path / "h", again, budget)
    assert again.calls == 0 and len(eval_rows(tmp_path / "h")) == len(rows)

    other = Scope("ana", "bench")  # another paying scope has its own day
    run(tmp_path / "h", ScriptedChatModel(default=reply), budget * 10, payer=other)
    assert len(eval_rows(tmp_path / "h", other)) == measured.calls


def test_the_pipelines_own_calls_are_under_the_budget_too(tmp_path):
    llm = ScriptedChatModel(default=reply)
    with pytest.raises(BudgetExceeded, match="paid by eval/default"):
        run(tmp_path / "h", llm, 1, modes=("pipeline",))  # the first extraction goes through, nothing after it
    assert llm.calls == 1 and llm.history[0]["messages"][0]["content"].startswith("You maintain the long-term memory")
    assert len(eval_rows(tmp_path / "h")) == 1


def test_offline_eval_opens_no_ledger(tmp_path):
    run_eval(load_samples(TINY), Settings(home=tmp_path / "h", daily_token_budget=0), k=3, modes=["turns"],
             offline=True, embedder=HashingEmbedder())
    assert not (tmp_path / "h").exists()


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_the_command_refuses_in_one_line_when_the_scope_has_spent_its_day(tmp_path, httpserver):
    def handler(request):
        text = reply(json.loads(request.get_data())["messages"])
        body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 400, "completion_tokens": 7, "total_tokens": 407}}
        return Response(json.dumps(body), 200, content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    env = {**base, "OPENAI_API_KEY": "sk-test-SECRET-abcdef1234567890", "OPENAI_BASE_URL": httpserver.url_for("/v1"),
           "MEMORY_CORE_EMBEDDING_MODEL": "wordllama", "MEMORY_CORE_HOME": str(tmp_path / "home"),
           "MEMORY_CORE_DAILY_TOKEN_BUDGET": "2000"}
    args = [sys.executable, "-m", "memory_core", "eval", str(TINY), "--mode", "turns", "--user", "ana",
            "--agent", "bench"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 2 and done.stdout == "" and "SECRET" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("memory-core eval: error: the evaluation's LLM calls are paid by ana/bench")
    rows = eval_rows(tmp_path / "home", Scope("ana", "bench"))
    assert len(rows) == len(httpserver.log) == 5  # 407 tokens a call: the fifth passes 2,000, the sixth is refused
