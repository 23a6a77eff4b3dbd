"""A realistic synthetic ChatGPT export, and how fast memory_core reads one.

`write_chatgpt_export(path, conversations=2000, seed=0)` writes `conversations.json` (or, for a path ending in
`.zip`, the export zip around it) shaped like the real thing: a `mapping` tree per conversation with the hidden
system root, custom-instruction context, edited user messages and regenerated answers (so several branches,
one current), tool calls and browsing output, reasoning, images and voice transcriptions, citation markers,
conversations marked "do not remember", lengths from one turn to forty, and timestamps spread over two years.

The user is one persona who states things about themselves in the first person ("I live in ...", "I work at
...", "I prefer ...") now and then, moves city halfway through, and on abandoned branches says things that are
not true: an offline heuristic extractor can find the statements, and a reader that follows the wrong branch
is caught. Same seed, same bytes.

Run: `python -m bench.chatgpt_export [conversations]` (or `python -m bench chatgpt_export`) to time writing,
reading and heuristic extraction, then importing the export into a fresh SQLite workspace through
`Memory.import_file` (offline: the heuristic extractor, WordLlama): the time to queue every conversation, the
memory that takes, the progress callbacks, processing the queue with `queue.flush()`, and a second import.
Each import runs in a fresh process, so that its memory is its own: one timed (peak RSS over the RSS before,
reset through /proc/self/clear_refs on Linux), one under tracemalloc (which slows Python down).
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

START = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
SPAN = 730 * 86400  # two years
CITIES = ["Lisbon", "Porto", "Toronto", "Leeds", "Kyoto", "Hamburg", "Austin", "Melbourne", "Lyon", "Valencia"]
COMPANIES = ["Tidewater Analytics", "Finch Labs", "Maplewire", "Northwind", "Globex", "Acme Robotics", "Bluefin Health"]
ROLES = ["data engineer", "product designer", "site reliability engineer", "nurse", "teacher", "backend developer"]
PREFERENCES = ["tea over coffee", "dark mode in every editor", "short answers", "tabs over spaces", "window seats",
               "paper notebooks", "PostgreSQL over MySQL", "morning workouts", "quiet cafes", "vim keybindings"]
HOBBIES = ["climb at the bouldering gym on Tuesdays", "bake sourdough on weekends", "play chess online",
           "cycle to work", "swim before breakfast", "play the cello"]
GOALS = ["learn Portuguese", "run a half marathon", "switch to a four-day week", "publish a small Python library",
         "save for a flat", "read fifty books this year"]
PETS = ["a cat named Miso", "a dog named Pixel", "two goldfish"]
TOPICS = ["How do I speed up a slow SQL query with a JOIN on two large tables?",
          "Can you explain the difference between a process and a thread?",
          "Write a short email declining a meeting politely.",
          "What's a good vegetarian dinner with chickpeas?",
          "Summarise the main ideas of stoicism in a few bullet points.",
          "How should I structure a README for a CLI tool?",
          "What are some stretches for lower back pain after sitting all day?",
          "Help me plan a three-day trip with trains only.",
          "Why does my Python script say 'ModuleNotFoundError'?",
          "Give me a regex that matches ISO dates.",
          "Translate 'where is the train station' into Portuguese.",
          "What should I look for when renting a flat?"]
SENTENCES = ["Here is a step-by-step approach.", "The short answer is yes, with one caveat.",
             "There are three common options worth comparing.", "Start with the simplest version and measure.",
             "A good rule of thumb is to keep it small.", "This usually comes down to the indexes involved.",
             "You can do this in a few lines.", "It depends on how often the data changes.",
             "Most people find the second option easier to maintain.", "Let me know if you want an example."]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _Persona:
    """Who the user is at a given time: they move city halfway through the two years."""

    def __init__(self, rng: random.Random) -> None:
        self.first_city, self.second_city = rng.sample(CITIES, 2)
        self.company, self.role = rng.choice(COMPANIES), rng.choice(ROLES)
        self.pet = rng.choice(PETS)
        self.preferences = rng.sample(PREFERENCES, 5)
        self.hobbies = rng.sample(HOBBIES, 3)
        self.goals = rng.sample(GOALS, 3)
        self.moved_at = START + SPAN / 2

    def statement(self, rng: random.Random, when: float) -> str:
        city = self.second_city if when >= self.moved_at else self.first_city
        choices = [f"I live in {city}.", f"I work at {self.company} as a {self.role}.",
                   f"I prefer {rng.choice(self.preferences)}.", f"I usually {rng.choice(self.hobbies)}.",
                   f"I want to {rng.choice(self.goals)}.", f"I have {self.pet}."]
        if when >= self.moved_at and rng.random() < 0.3:
            choices.append(f"I just moved to {self.second_city} from {self.first_city}.")
        return rng.choice(choices)

    def falsehood(self, rng: random.Random) -> str:
        wrong = rng.choice([c for c in CITIES if c not in (self.first_city, self.second_city)])
        return rng.choice([f"I live in {wrong}.", f"I work at a bakery in {wrong}."])


class _Tree:
    """A conversation's mapping, built node by node."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.mapping: dict[str, dict[str, Any]] = {}
        self.root = self.add(None, None)

    def add(self, parent: str | None, message: dict[str, Any] | None) -> str:
        node_id = message["id"] if message else "client-created-root"
        self.mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            self.mapping[parent]["children"].append(node_id)
        return node_id

    def message(self, role: str, content: dict[str, Any], when: float | None, *, hidden: bool = False,
                recipient: str = "all", name: str | None = None, **metadata: Any) -> dict[str, Any]:
        if hidden:
            metadata["is_visually_hidden_from_conversation"] = True
        return {"id": _uuid(self.rng), "author": {"role": role, "name": name, "metadata": {}},
                "create_time": when, "update_time": None, "content": content, "status": "finished_successfully",
                "end_turn": True if role == "assistant" and recipient == "all" else None, "weight": 1.0,
                "metadata": metadata, "recipient": recipient, "channel": None}


def _text(parts: list[Any], kind: str = "text") -> dict[str, Any]:
    return {"content_type": kind, "parts": parts}


def _answer(rng: random.Random) -> str:
    words = [rng.choice(SENTENCES) for _ in range(rng.choice([1, 2, 3, 4, 6, 10]))]
    if rng.random() < 0.15:
        words.append("\ue200cite\ue202turn0search%d\ue201" % rng.randrange(9))
    return " ".join(words)


def _conversation(rng: random.Random, persona: _Persona, when: float, stats: dict[str, Any]) -> dict[str, Any]:
    tree = _Tree(rng)
    cid = _uuid(rng)
    node = tree.add(tree.root, tree.message("system", _text([""]), None, hidden=True))
    if rng.random() < 0.1:
        context = tree.message("user", {"content_type": "user_editable_context",
                                        "user_profile": f"I am a {persona.role}.", "user_instructions": "Be brief."},
                               None, hidden=True, is_user_system_message=True)
        node = tree.add(node, context)
    turns = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12, 20, 40])
    t = when
    edit_at = rng.randrange(turns) if rng.random() < 0.15 else -1
    regenerate_at = rng.randrange(turns) if rng.random() < 0.1 else -1
    statements: list[str] = []
    for turn in range(turns):
        t += rng.uniform(20, 400)
        says = persona.statement(rng, t) if rng.random() < 0.25 else None
        question = rng.choice(TOPICS)
        text = f"{says} {question}" if says else question
        if turn == edit_at:  # the first version, edited away: its answer stays on a dead branch
            falsehood = persona.falsehood(rng)
            old = tree.add(node, tree.message("user", _text([f"{falsehood} {question}"]), t))
            tree.add(old, tree.message("assistant", _text([_answer(rng)]), t + 5, model_slug="gpt-4o"))
            stats["abandoned"].append(falsehood)
            t += 60
        if rng.random() < 0.05:
            user = tree.message("user", _text([{"content_type": "image_asset_pointer",
                                               "asset_pointer": f"sediment://file_{rng.getrandbits(64):016x}",
                                               "size_bytes": rng.randrange(50_000, 900_000), "width": 1024,
                                               "height": 768, "metadata": {"sanitized": True}}, text],
                                             "multimodal_text"), t)
        elif rng.random() < 0.04:
            user = tree.message("user", _text([{"content_type": "audio_transcription", "text": text,
                                               "direction": "in"}], "multimodal_text"), t)
        else:
            user = tree.message("user", _text([text]), t)
        node = tree.add(node, user)
        if says:
            statements.append(says)
        if rng.random() < 0.08:  # a browsing call: code to the tool, the tool's output, then the answer
            node = tree.add(node, tree.message("assistant", {"content_type": "code", "language": "unknown",
                                                             "text": f'search("{question[:30]}")'}, t + 2,
                                               recipient="web.run"))
            node = tree.add(node, tree.message("tool", {"content_type": "tether_browsing_display",
                                                        "result": "...", "summary": None}, t + 3, name="web.run"))
        if rng.random() < 0.06:
            node = tree.add(node, tree.message("assistant", {"content_type": "thoughts", "thoughts": [
                {"summary": "Thinking", "content": "Considering the options."}]}, t + 4))
        if turn == regenerate_at:  # an answer the user asked to regenerate
            tree.add(node, tree.message("assistant", _text(["An earlier draft. " + _answer(rng)]), t + 5))
            t += 30
        node = tree.add(node, tree.message("assistant", _text([_answer(rng)]), t + 6, model_slug="gpt-4o"))
    forget = rng.random() < 0.02
    stats["conversations"] += 1
    stats["messages"] += 2 * turns
    stats["branched"] += int(edit_at >= 0 or regenerate_at >= 0)
    stats["do_not_remember"] += int(forget)
    if not forget:
        stats["statements"].extend(statements)
    return {"title": rng.choice(TOPICS)[:40], "create_time": when, "update_time": t + 10, "mapping": tree.mapping,
            "moderation_results": [], "current_node": node, "plugin_ids": None, "conversation_id": cid,
            "conversation_template_id": None, "gizmo_id": None, "gizmo_type": None, "is_archived": rng.random() < 0.05,
            "is_starred": None, "safe_urls": [], "default_model_slug": "gpt-4o", "conversation_origin": None,
            "voice": None, "async_status": None, "disabled_tool_ids": [], "is_do_not_remember": forget,
            "memory_scope": "global_enabled", "id": cid}


def write_chatgpt_export(path: str | Path, conversations: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Write a synthetic export to `path` (JSON, or the export zip when it ends in .zip); what was written.

    Returns counts (conversations, messages, branched, do_not_remember, bytes), the first-person `statements`
    on current branches of remembered conversations, the untrue ones on `abandoned` branches, and the time range
    covered (`first`, `last`, epoch seconds).
    """
    rng = random.Random(seed)
    persona = _Persona(rng)
    stats: dict[str, Any] = {"conversations": 0, "messages": 0, "branched": 0, "do_not_remember": 0,
                             "statements": [], "abandoned": []}
    times = sorted(START + rng.uniform(0, SPAN) for _ in range(conversations))
    items = [_conversation(rng, persona, when, stats) for when in times]
    items.sort(key=lambda c: c["update_time"], reverse=True)  # the export lists the latest first
    body = json.dumps(items, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    path = Path(path)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("conversations.json", body)
            zf.writestr("user.json", json.dumps({"id": "user-synthetic", "email": "someone@example.com"}))
            zf.writestr("message_feedback.json", "[]")
            zf.writestr("chat.html", "<html><body>Synthetic export</body></html>")
    else:
        path.write_bytes(body)
    stats["bytes"] = len(body)
    stats["first"], stats["last"] = times[0] if times else None, times[-1] if times else None
    return stats


def main(conversations: int = 2000) -> None:
    from memory_core.extraction.offline.heuristics import heuristic_facts
    from memory_core.portability import read_import

    from bench.common import row

    print(f"Synthetic ChatGPT export ({conversations:,} conversations): write, read, offline extraction")
    with tempfile.TemporaryDirectory(prefix="mc-chatgpt-") as folder:
        target = Path(folder) / "export.zip"
        t = time.perf_counter()
        stats = write_chatgpt_export(target, conversations)
        row("write (zip)", f"{time.perf_counter() - t:.2f} s", f"{stats['bytes'] / 2**20:.1f} MiB JSON")
        t = time.perf_counter()
        parsed = read_import(target)
        read_seconds = time.perf_counter() - t
        messages = sum(len(c.messages) for c in parsed.conversations)
        row("read_import (detect + parse)", f"{read_seconds:.2f} s", f"{len(parsed.conversations):,} conversations",
            f"{messages:,} messages")
        texts = [m.content for c in parsed.conversations for m in c.messages if m.role == "user"]
        t = time.perf_counter()
        found = sum(len(heuristic_facts(text)) for text in texts)
        row("heuristic_facts over user messages", f"{time.perf_counter() - t:.2f} s",
            f"{found:,} candidates for {len(stats['statements']):,} statements")
        untrue = set(stats["abandoned"])
        read = sum(any(text.startswith(u) for u in untrue) for text in texts)
        row("untrue statements from dead branches read (should be 0)", read,
            f"{len(stats['abandoned']):,} planted on dead branches")
        del parsed, texts
        imported(target, stats, read_seconds)


def imported(target: Path, stats: dict[str, Any], read_seconds: float) -> None:
    """Import the export in fresh processes and print the figures beside the reading time."""
    from bench.common import row

    print("Importing it into a fresh SQLite workspace (Memory.import_file, offline), each run in a fresh process")
    said = {c for c in CITIES if any(c in text for text in stats["statements"])}
    wrong = sorted({c for c in CITIES if any(c in text for text in stats["abandoned"])} - said)
    timed = _child("timed", target, wrong)
    traced = _child("traced", target, wrong)
    queued, seconds = timed["queued"], timed["import_seconds"]
    row("import_file: detect, parse, queue every conversation", f"{seconds:.2f} s",
        f"{queued:,} queued ({timed['pending']:,} pending)", f"{seconds / read_seconds:.1f}x read_import",
        f"{seconds / max(queued, 1) * 1e3:.2f} ms per conversation")
    row("  extra memory: peak RSS growth, tracemalloc peak",
        f"{timed['rss_mb']:.0f} MB" + ("" if timed["rss_precise"] else " (ru_maxrss)"),
        f"{traced['traced_mb']:.0f} MB", f"{stats['bytes'] / 1e6:.0f} MB of JSON",
        f"{timed['rss_mb'] / (stats['bytes'] / 1e6):.1f}x the JSON")
    row("  tracemalloc peak of read_import alone", f"{traced['read_traced_mb']:.0f} MB",
        f"import / read {traced['traced_mb'] / traced['read_traced_mb']:.2f}x")
    row("  progress callbacks (monotonic, last fraction)", f"{timed['callbacks']:,}",
        "yes" if timed["monotonic"] else "NO", f"{timed['last_fraction']}")
    flushed = timed["flushed"]
    row("queue.flush(): process every queued conversation", f"{timed['flush_seconds']:.1f} s",
        f"{flushed:,} applied", f"{timed['flush_seconds'] / max(flushed, 1) * 1e3:.1f} ms each",
        f"{timed['flush_seconds'] / seconds:.1f}x the import")
    row("  facts produced (valid / with superseded ones)", f"{timed['facts']:,}", f"{timed['facts_all']:,}",
        f"{timed['days']:,} daily files")
    row("  facts from dead branches (should be 0)", timed["untrue_facts"],
        f"({len(stats['abandoned']):,} untrue statements planted)")
    again = timed["again"]
    row("second import of the same file (adds nothing)", f"{timed['again_seconds']:.2f} s",
        f"{again['conversations']:,} queued, {again['conversations_skipped']:,} skipped",
        f"{timed['again_seconds'] / read_seconds:.1f}x read_import",
        f"{timed['again_seconds'] / seconds:.2f}x the first")


def _child(kind: str, target: Path, wrong: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.chatgpt_export", "--child", kind, str(target), ",".join(wrong)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_import(kind: str, target: Path, wrong: list[str]) -> dict[str, Any]:
    """In this process: import `target` into a fresh workspace; with kind "traced" only the import, under
    tracemalloc; with "timed" the import (time, RSS), the flush and a second import. `wrong`: cities said
    only on dead branches (a fact naming one was read from the wrong branch)."""
    from bench.common import fresh_memory
    from bench.index_memory_bench import _reset_peak, _rss_kib

    memory = fresh_memory(rate_limit_seconds=0, debounce_seconds=3600, dream_schedule_enabled=False)
    try:
        memory.queue.pending()  # the database opened and migrated before measuring
        fractions: list[float] = []

        def progress(fraction: float, _what: str) -> None:
            fractions.append(fraction)

        result: dict[str, Any] = {}
        if kind == "traced":
            from memory_core.portability import read_import

            tracemalloc.start()
            parsed = read_import(target)
            result["read_traced_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
            del parsed
            tracemalloc.reset_peak()
            memory.import_file(target, user_id="ana", agent_name="chatgpt", progress=progress)
            result["traced_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            return result
        before = _rss_kib("VmRSS")
        precise = _reset_peak() and before is not None
        before_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        report = memory.import_file(target, user_id="ana", agent_name="chatgpt", progress=progress)
        result["import_seconds"] = time.perf_counter() - t
        if precise:
            result["rss_mb"] = (_rss_kib("VmHWM") - before) * 1024 / 1e6
        else:
            result["rss_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_max) * 1024 / 1e6
        result.update(rss_precise=precise, queued=report.conversations, callbacks=len(fractions),
                      monotonic=fractions == sorted(fractions), last_fraction=fractions[-1] if fractions else None,
                      pending=memory.queue.pending(user_id="ana", agent_name="chatgpt"))
        t = time.perf_counter()
        result["flushed"] = memory.queue.flush()
        result["flush_seconds"] = time.perf_counter() - t
        facts = memory.facts.list(user_id="ana", agent_name="chatgpt", include_invalid=True)
        result["facts_all"] = len(facts)
        result["facts"] = memory.facts.count(user_id="ana", agent_name="chatgpt")
        result["days"] = len(memory.daily.days(user_id="ana", agent_name="chatgpt"))
        result["untrue_facts"] = sum("bakery" in f.content.lower() or any(c in f.content for c in wrong)
                                     for f in facts)
        t = time.perf_counter()
        again = memory.import_file(target, user_id="ana", agent_name="chatgpt")
        result["again_seconds"] = time.perf_counter() - t
        result["again"] = {"conversations": again.conversations, "conversations_skipped": again.conversations_skipped}
        return result
    finally:
        memory.close(flush=False)
        shutil.rmtree(memory.settings.home, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(measure_import(sys.argv[2], Path(sys.argv[3]), [c for c in sys.argv[4].split(",") if c])))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
