"""One truth, measured: the stale-memory rate.

60 scripted life changes (moves, job changes, preferences that changed, things the user asked to forget), each in a
scope of its own, go through the paths a user's memory takes: the first statement as a conversation (`update()`),
the same words in the daily log and a Deep Dream (so MEMORY.md holds it), then the change (a correction in a
conversation, or "forget that": `facts.invalidate`), more log and a second dream. Then the text an agent is given
(`format_for_injection()` and `read_core()`) is checked for the old value; and, counted apart ("with a query"),
`format_for_injection(query=the first statement)`, whose passages quote the first conversation: a passage stating
the old value must be marked "no longer current". Offline, a "forget that" of something said that never became a
fact (the heuristic extractor keeps first-person statements about the user only: "My sister lives in Valencia")
retires nothing, so its passage is not marked: `facts.erase` is the way to forget those. Stale rate = the share of changes whose
old value is still stated there; the goal is 0. Twice: offline (heuristic extractor, deterministic dream) and with
a scripted LLM that extracts, corrects and consolidates the way a good model does. `python -m bench stale_memory`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from memory_core import ManualClock, ScriptedChatModel
from memory_core.search.embedders import HashingEmbedder
from bench.common import fresh_memory, row

CITIES = ["Lisbon", "Porto", "Berlin", "Munich", "Madrid", "Seville", "Toronto", "Montreal", "Osaka", "Kyoto",
          "Dublin", "Cork", "Oslo", "Bergen", "Austin", "Denver", "Lyon", "Nantes", "Milan", "Turin"]
EMPLOYERS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Cyberdyne", "Tyrell",
             "Soylent", "Wonka", "Gringotts", "Monarch", "Aperture", "Blackmesa", "Oscorp", "Pied", "Massive", "Dunder"]
LIKES = [("tea", "coffee"), ("jazz", "techno"), ("Python", "Rust"), ("running", "cycling"), ("vim", "emacs"),
         ("sushi", "ramen"), ("chess", "poker"), ("skiing", "surfing"), ("Marvel", "Ghibli"), ("Kafka", "Borges")]
FORGET = [("My favourite band is {x}.", "Radiohead"), ("I have a dog called {x}.", "Biscuit"),
          ("My sister lives in {x}.", "Valencia"), ("I am allergic to {x}.", "peanuts"),
          ("My car is a {x}.", "Corolla"), ("I support {x} football club.", "Benfica"),
          ("My middle name is {x}.", "Joaquim"), ("I play the {x}.", "cello"),
          ("My gym is {x}.", "Fitzone"), ("My dentist is Dr {x}.", "Albers")]


@dataclass(frozen=True)
class Change:
    kind: str
    before: str  # what the user says first
    after: str | None  # what the user says when it changes (None: they ask to forget it)
    old: str  # the word that must be gone from what the agent is given
    fact: str  # the third-person fact of `before` (what a good extractor writes)
    new_fact: str | None


def changes() -> list[Change]:
    out = []
    for i in range(0, 20, 2):  # 10 moves, in two phrasings
        a, b = CITIES[i], CITIES[i + 1]
        after = f"I moved to {b} last month." if i % 4 == 0 else f"Quick update: I live in {b} now."
        out.append(Change("move", f"I live in {a}.", after, a, f"User lives in {a}", f"User lives in {b}"))
    for i in range(0, 20, 2):  # 10 job changes
        a, b = EMPLOYERS[i], EMPLOYERS[i + 1]
        after = f"I changed jobs, I work at {b} now." if i % 4 == 0 else f"Actually I work at {b} these days."
        out.append(Change("job", f"I work at {a} as an engineer.", after, a, f"User works at {a} as an engineer",
                          f"User works at {b}"))
    for a, b in LIKES:  # 20 preferences changed, two phrasings each
        out.append(Change("preference", f"I love {a}.", f"I don't like {a} anymore, I prefer {b}.", a,
                          f"User loves {a}", f"User prefers {b}"))
        out.append(Change("preference", f"My favourite is {a}.", f"Actually my favourite is {b} now.", a,
                          f"User's favourite is {a}", f"User's favourite is {b}"))
    for template, x in FORGET:  # 20 things forgotten: said, then "forget that"
        out.append(Change("forget", template.format(x=x), None, x, "User " + _third(template.format(x=x)), None))
        out.append(Change("forget", "btw " + template.format(x=x).lower(), None, x,
                          "User " + _third(template.format(x=x)), None))
    return out


def _third(sentence: str) -> str:
    s = sentence.rstrip(".")
    s = re.sub(r"^My ", "'s ", s)
    s = re.sub(r"^I am ", "is ", s)
    s = re.sub(r"^I have ", "has ", s)
    s = re.sub(r"^I play ", "plays ", s)
    s = re.sub(r"^I support ", "supports ", s)
    return s.replace(" 's", "'s")


class GoodModel:
    """A scripted LLM that answers the way a good model does: it extracts the change's fact, supersedes the old
    one by its id (read from the prompt), rewrites stale sentences, and consolidates the log's statements."""

    def __init__(self) -> None:
        self.change: Change | None = None

    def __call__(self, messages: list[dict]) -> str:
        prompt = messages[-1]["content"]
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        change = self.change
        if "<conversation>" in prompt:
            said = prompt.split("<conversation>", 1)[1]
            if change.after and change.after[:20] in said and change.new_fact:
                match = re.search(r'"id": "(fact_[0-9a-f]{8})", "content": "' + re.escape(change.fact), prompt)
                fact = {"content": change.new_fact, "category": "context", "confidence": 0.9}
                if match:
                    fact["supersedes"] = match.group(1)
                return json.dumps({"facts": [fact], "user": {"workContext": {"summary": change.new_fact + ".",
                                                                             "shouldUpdate": True}}})
            return json.dumps({"facts": [{"content": change.fact, "category": "context", "confidence": 0.9}],
                               "user": {"workContext": {"summary": change.fact + ".", "shouldUpdate": True}}})
        if "[MEMORY]" in system or "[MEMORY]" in prompt:
            valid = re.findall(r"^- (User[^\n]*)$", prompt, re.M)
            bullets = sorted(set(valid + [f for f in (change.fact, change.new_fact) if f]))
            return "[MEMORY]\n" + "\n".join(f"- {b}" for b in bullets) + "\n[DREAM]\nConsolidated the logs.\n"
        if "No longer true:" in prompt:
            return "NONE"
        return "NONE"


VERBOSE = False
_NEGATED = re.compile(r"\b(?:no longer|not|n't|anymore|stopped|quit|used to|former(?:ly)?)\b", re.I)


def states_old(given: str, old: str) -> bool:
    """Whether a line of `given` still says the old value as current (a line saying it stopped does not)."""
    return any(re.search(rf"\b{re.escape(old)}\b", line, re.I) and not _NEGATED.search(line)
               for line in given.split("\n"))


def run(mode: str) -> tuple[int, int, dict[str, list[int]]]:
    clock = ManualClock(datetime(2026, 5, 1, 9, tzinfo=timezone.utc))
    model = GoodModel()
    llm = ScriptedChatModel(default=model) if mode == "llm" else None
    memory = fresh_memory(clock=clock, llm=llm, embedder=HashingEmbedder(), dream_schedule_enabled=False)
    stale = stale_query = 0
    by_kind: dict[str, list[int]] = {}
    all_changes = changes()
    for n, change in enumerate(all_changes):
        model.change = change
        scope = {"user_id": f"u{n}", "agent_name": "bench"}
        turn = [{"role": "user", "content": change.before}, {"role": "assistant", "content": "Noted."}]
        result = memory.update(turn, thread_id="t1", **scope)
        memory.daily.append(f"User: {change.before}", **scope)
        memory.deep_dream(1, force=True, **scope)
        clock.advance(3600)
        if change.after:
            memory.update([{"role": "user", "content": change.after}, {"role": "assistant", "content": "Noted."}],
                          thread_id="t2", **scope)
            memory.daily.append(f"User: {change.after}", **scope)
        else:  # "forget that": the fact the first statement made is invalidated
            for fact in result.added or memory.facts.list(**scope):
                memory.facts.invalidate(fact.id, reason="the user asked to forget it")
        clock.advance(3600)
        memory.deep_dream(1, force=True, **scope)
        given = memory.format_for_injection(**scope) + "\n" + (memory.read_core(**scope) or "")
        # With a query the passages of the conversations come in too: the first one states the old value and must
        # be marked as no longer current (or left out). Counted apart: `stale_query`.
        asked = memory.format_for_injection(query=change.before, **scope)
        stale_query += states_old(asked, change.old)
        is_stale = states_old(given, change.old)
        if is_stale and VERBOSE:
            print(f"    stale ({mode}): {change.before} -> {change.after or 'forget'}: {given!r}")
        stale += is_stale
        by_kind.setdefault(change.kind, [0, 0])
        by_kind[change.kind][0] += is_stale
        by_kind[change.kind][1] += 1
        clock.advance(86400)
    memory.close()
    by_kind["with a query"] = [stale_query, len(all_changes)]
    return stale, len(all_changes), by_kind


def main() -> None:
    print("stale memory: scripted life changes through updates, corrections, forgets and dreams; the share whose old "
          "value the agent is still given (goal 0)")
    for mode in ("offline", "llm"):
        stale, total, by_kind = run(mode)
        row(f"{mode}: stale rate", f"{stale}/{total} = {stale / total:.3f}",
            "  ".join(f"{k} {s}/{t}" for k, (s, t) in by_kind.items()))
