"""Issue 7: compressing a 2,000-message agent transcript."""

from __future__ import annotations

import json
import random
import time

from memory_core import compress_messages


def transcript(n: int = 2000, seed: int = 3) -> list[dict]:
    rnd = random.Random(seed)
    msgs: list[dict] = [{"role": "system", "content": "You are a coding agent."}]
    i = 0
    while len(msgs) < n:
        i += 1
        msgs.append({"role": "user", "content": f"Step {i}: please check file {rnd.randint(1, 30)}.py"})
        cid = f"call_{i}"
        name = rnd.choice(["read_file", "grep", "run_tests"])
        args = {"path": f"src/{rnd.randint(1, 30)}.py"} if name != "run_tests" else {"args": ["-q"] * rnd.randint(1, 40)}
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        failed = rnd.random() < 0.15
        msgs.append({"role": "tool", "tool_call_id": cid,
                     "content": "Error: command failed" if failed else "x = 1\n" * rnd.randint(5, 60)})
        msgs.append({"role": "assistant", "content": f"Done with step {i}."})
    return msgs[:n]


def main() -> None:
    msgs = transcript()
    start = time.perf_counter()
    result = compress_messages(msgs)
    elapsed = time.perf_counter() - start
    print("compress_messages on a 2,000-message transcript")
    print(f"  time {elapsed * 1000:.0f} ms; messages {len(msgs)} -> {len(result.messages)}; tokens "
          f"{result.tokens_before} -> {result.tokens_after} (saved {result.tokens_saved}, "
          f"{result.tokens_saved / result.tokens_before:.0%}); errored calls purged {result.purged}")


if __name__ == "__main__":
    main()
