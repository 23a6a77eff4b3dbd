"""`memory-core eval`: the command end to end in a subprocess, on a tiny invented conversation in LoCoMo's
format (tests/data/locomo_tiny.json), offline and with the real openai client against a scripted
OpenAI-compatible server (the LLM answers from the injected memory and judges itself)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from werkzeug import Response

from memory_core import Settings
from memory_core.evaluation import answer_in_context, load_samples, parse_samples, run_eval
from memory_core.evaluation.judge import label
from memory_core.evaluation.locomo import session_date
from memory_core.search.embedders import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "locomo_tiny.json"
GOLD = {q["question"]: str(q.get("answer", "")) for s in json.loads(TINY.read_text()) for q in s["qa"]}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_CORE_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "memory_core", "eval", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**base, **(env or {})}, timeout=600)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_eval_end_to_end_offline_json(tmp_path):
    home = tmp_path / "home"
    done = run_cli(str(TINY), "--k", "3", "--json", env={"MEMORY_CORE_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["questions"] == 8 and report["k"] == 3 and report["llm"] is None  # category 5 left out
    assert set(report["modes"]) == {"turns", "pipeline"}
    for mode in report["modes"].values():
        assert {"recall@3", "answer_in_context", "by_category"} <= set(mode) and "qa_accuracy" not in mode
        assert set(mode["by_category"]) == {"1", "2", "3", "4"}
        assert [c["questions"] for c in mode["by_category"].values()] == [2, 1, 1, 4]
        assert all(0.0 <= c[key] <= 1.0 for c in mode["by_category"].values() for key in ("recall@3", "answer_in_context"))
    turns, pipeline = report["modes"]["turns"], report["modes"]["pipeline"]
    single = turns["by_category"]["4"]
    assert turns["facts"] == 18 and {k: single[k] for k in ("name", "questions", "recall@3", "answer_in_context")} == {
        "name": "single-hop", "questions": 4, "recall@3": 1.0, "answer_in_context": 1.0}
    assert 0 < single["mean_tokens"] <= single["max_tokens"] <= report["max_tokens"] == 2000  # the tokens injected
    assert turns["by_category"]["2"]["answer_in_context"] == 0.0  # "late February 2024" is said nowhere
    assert pipeline["daily_blocks"] == 3 and pipeline["recall@3"] > 0.5  # each session's log finds its turns
    assert not home.exists()  # a temporary memory: the configured one is never touched


def test_eval_readable_output_puts_the_modes_side_by_side():
    done = run_cli(str(TINY), "--k", "3", "--mode", "turns")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("8 questions (categories 1-4) in 1 conversation(s); LLM: none (offline)")
    assert "turns" in lines[1] and "pipeline" not in done.stdout
    assert re.match(r"^all\s+8\s+0\.\d{3}\s+0\.\d{3}\s+\d+\s+\d+$", [line for line in lines if line.startswith("all")][0])


@pytest.mark.parametrize("content,expected", [
    ("not json at all", "is not valid JSON"),
    ('{"conversation": {}}', "expected a JSON list of LoCoMo samples"),
    ("[]", "expected a JSON list of LoCoMo samples"),
    ('[{"conversation": {"session_1": []}}]', "sample 0: 'qa' must be a list"),
    ('[{"conversation": {"speaker_a": "A"}, "qa": []}]', "no session_N list of turns"),
    ('[{"conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1"}]}, "qa": []}]', "turn 0 needs string"),
    ('[{"conversation": {"session_1": []}, "qa": [{"question": "Why?", "category": 9}]}]', "'category' must be one of 1-5"),
    ('[{"conversation": {"session_1": []}, "qa": [{"question": "Why?", "category": 1, "evidence": "D1:1"}]}]',
     "'evidence' must be a list"),
])
def test_malformed_file_is_one_line_and_exit_2(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    done = run_cli(str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("memory-core eval: error: ") and expected in done.stderr


def test_missing_file_and_bad_k():
    done = run_cli("no-such-file.json")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "no-such-file.json" in done.stderr
    assert run_cli(str(TINY), "--k", "0").returncode == 2


def test_locomo_reading_details():
    sample = load_samples(TINY)[0]
    assert sample.speakers == ("Priya", "Tomas") and [s.number for s in sample.sessions] == [1, 2, 3]
    assert sample.sessions[1].when.isoformat() == "2024-04-17T18:40:00+00:00"
    adversarial = [q for q in sample.questions if q.category == 5][0]
    assert adversarial.answer == "a rosette"  # read from adversarial_answer
    multi = parse_samples([{"conversation": {"session_10": [], "session_2": []},
                            "qa": [{"question": "Q?", "category": 1, "evidence": ["D8:6; D9:17", "D1:2"]}]}])[0]
    assert [s.number for s in multi.sessions] == [2, 10]  # by number, not as text
    assert multi.questions[0].evidence == {"D8:6", "D9:17", "D1:2"}
    assert session_date("sometime", 3).isoformat() == "2000-01-04T12:00:00+00:00"


def test_answer_in_context_and_judge_label():
    assert answer_in_context("a green Dawes touring bike", "Tomas bought a touring bike, a green Dawes.") is True
    assert answer_in_context("Painting", "Melanie paints sunsets") is True  # stems
    assert answer_in_context("7 May 2023", "the group met in May") is False
    assert answer_in_context("", "anything") is None
    # a date, however it is written, on either side
    assert answer_in_context("7 May 2023", "[2023-05-07] Caroline went to the group") is True
    assert answer_in_context("2023-05-07", "yesterday (7 May 2023)") is True
    assert answer_in_context("May 7, 2023", "on the 7th of May 2023") is True
    assert answer_in_context("7 May 2023", "on May 7th, 2023") is True
    assert answer_in_context("The sunday before 25 May 2023", "[25 May 2023]\n- Mel: last Sunday (21 May 2023)") is True
    assert answer_in_context("8 May 2023", "2023-05-07") is False
    assert answer_in_context("2023-05-07", "May 2023") is False
    assert answer_in_context("10 years ago", "a bowl for my 18th birthday ten years ago (2013)") is True
    assert answer_in_context("7 years", "Seven years now (since 2016)") is True
    assert answer_in_context("3 kids", "our two kids") is False
    assert label('{"label": "CORRECT"}') == "CORRECT" and label("```json\n{\"label\": \"WRONG\"}\n```") == "WRONG"
    assert label("Correct.") == "CORRECT" and label("no idea") == "WRONG"


def test_run_eval_in_process_with_one_mode(tmp_path):
    report = run_eval(load_samples(TINY), Settings(home=tmp_path / "h"), k=5, modes=["turns"], embedder=HashingEmbedder())
    assert list(report["modes"]) == ["turns"] and report["modes"]["turns"]["recall@5"] > 0.5
    with pytest.raises(ValueError):
        run_eval(load_samples(TINY), Settings(home=tmp_path / "h"), modes=["nope"])


# -- with an LLM: the real openai client against a scripted server ------------------------------------------------


def completion(text: str) -> dict:
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


@pytest.mark.slow  # two seconds or more: left out of the quick run
@pytest.mark.parametrize("rerank", [False, True])
def test_qa_accuracy_with_a_scripted_llm(tmp_path, httpserver, rerank):
    """With `llm_rerank` on, the memory's rerank calls while it is asked are reported apart (rerank_tokens)."""
    calls = {"answer": 0, "judge": 0, "correct": 0, "memory": 0, "rerank": 0}

    def handler(request):
        body = json.loads(request.get_data())
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You answer questions about people"):
            calls["answer"] += 1
            gold = GOLD[user]
            memory = system.split("<memory>", 1)[1].lower()
            # Answers right exactly when every word of the gold answer is in the memory it was given.
            text = gold if all(w in memory for w in re.findall(r"\w+", gold.lower())) else "I don't know"
        elif system.startswith("Your task is to label an answer"):
            calls["judge"] += 1
            gold = re.search(r"Gold answer: (.*)\n", user).group(1)
            generated = re.search(r"Generated answer: (.*)$", user).group(1)
            verdict = "CORRECT" if generated.strip().lower() == gold.strip().lower() else "WRONG"
            calls["correct"] += verdict == "CORRECT"
            text = json.dumps({"label": verdict})
        elif system.startswith("You choose what an assistant should be shown"):
            calls["rerank"] += 1
            text = json.dumps({"relevant": [1]})
        else:  # the pipeline's own LLM work: extraction, summaries, dreams
            calls["memory"] += 1
            text = json.dumps({"facts": [{"content": "Priya's favourite colour is teal", "category": "preference",
                                          "confidence": 0.9}]})
            if system.startswith("Summarise"):
                text = "- Priya and Tomas caught up; Priya's favourite colour is teal."
        return Response(json.dumps(completion(text)), 200, content_type="application/json")

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    env = {"OPENAI_API_KEY": "sk-test-SECRET-abcdef1234567890", "OPENAI_BASE_URL": httpserver.url_for("/v1"),
           "MEMORY_CORE_EMBEDDING_MODEL": "wordllama", "MEMORY_CORE_LLM_MODEL": "judge-model",
           "MEMORY_CORE_HOME": str(tmp_path / "home"), "MEMORY_CORE_LLM_RERANK": str(rerank).lower()}
    done = run_cli(str(TINY), "--k", "3", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "SECRET" not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["llm"] == "judge-model"
    turns, pipeline = report["modes"]["turns"], report["modes"]["pipeline"]
    full = report["full_context"]  # the ceiling: the same model given the whole conversation
    assert calls["answer"] == calls["judge"] == 24  # 8 answerable questions, two modes and the full context
    assert (turns["qa_accuracy"] + pipeline["qa_accuracy"] + full["qa_accuracy"]) * 8 == pytest.approx(calls["correct"])
    assert full["qa_accuracy"] == 6 / 8  # all but "late February 2024" and the open-domain guess are said in it
    assert full["qa_tokens"] == {"input": 8 * 2 * 11, "output": 8 * 2 * 7} and full["mean_tokens"] > 100
    assert turns["qa_accuracy"] >= 0.5  # the turns are all there: most answers are in the injected text
    for mode in (turns, pipeline):
        assert mode["qa_tokens"] == {"input": 8 * 2 * 11, "output": 8 * 2 * 7}
        assert set(mode["by_category"]["4"]) >= {"qa_accuracy", "recall@3", "answer_in_context"}
    assert pipeline["memory_tokens"] == {"input": calls["memory"] * 11, "output": calls["memory"] * 7}
    assert calls["memory"] >= 6 and pipeline["facts"] == 1  # extraction and a summary per session, one new fact

    from memory_core import Memory, Settings

    with Memory(Settings(home=tmp_path / "home", llm_api_key=None, llm_base_url=None), worker=False) as m:
        spent = [r for r in m.usage() if r.operation == "eval"]  # what the evaluation spent, in the ledger
        assert sum(r.input_tokens for r in spent) == 3 * (8 * 2 * 11) + (calls["memory"] + calls["rerank"]) * 11
    if rerank:  # a query's injection of the pipeline (8 questions), each call reported; the turns mode's few facts
        # all fit in the budget and nothing else is kept, so that no query can change what it is given: no rerank
        assert calls["rerank"] >= 8 and turns["rerank_tokens"] == {"input": 0, "output": 0}
        assert pipeline["rerank_tokens"] == {"input": calls["rerank"] * 11, "output": calls["rerank"] * 7}
    else:
        assert calls["rerank"] == 0 and "rerank_tokens" not in pipeline

    offline = run_cli(str(TINY), "--k", "3", "--json", "--mode", "turns", "--offline", env=env)
    assert offline.returncode == 0 and json.loads(offline.stdout)["llm"] is None
    assert "qa_accuracy" not in json.loads(offline.stdout)["modes"]["turns"] and calls["answer"] == 24
    assert "full_context" not in json.loads(offline.stdout)


@pytest.mark.slow  # two seconds or more: left out of the quick run
def test_a_failing_llm_ends_the_run_with_one_line(tmp_path, httpserver):
    httpserver.expect_request("/v1/chat/completions").respond_with_json({"error": {"message": "boom"}}, status=500)
    env = {"OPENAI_API_KEY": "sk-test-SECRET-abcdef1234567890", "OPENAI_BASE_URL": httpserver.url_for("/v1"),
           "MEMORY_CORE_EMBEDDING_MODEL": "wordllama", "MEMORY_CORE_LLM_MAX_RETRIES": "0",
           "MEMORY_CORE_HOME": str(tmp_path / "home")}
    done = run_cli(str(TINY), "--mode", "turns", env=env)
    assert done.returncode == 1 and done.stdout == "" and "SECRET" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("memory-core eval: error: LLM")
