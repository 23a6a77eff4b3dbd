"""A second process for the erase tests: erases (stopping where MEMORY_CORE_ERASE_STOP says), reopens, or holds a
live context session until told to end it. Run as `python -m tests.consistency.erase_child MODE HOME URL [ARG]`."""

from __future__ import annotations

import sys

from memory_core import Memory, Settings
from memory_core.search.embedders import HashingEmbedder


def open_memory(home: str, url: str) -> Memory:
    settings = Settings(home=home, database_url=url, timezone="UTC", llm_api_key=None, llm_base_url=None)
    return Memory(settings, embedder=HashingEmbedder(), worker=False)


def main(mode: str, home: str, url: str, arg: str = "") -> None:
    m = open_memory(home, url)
    if mode == "erase":
        m.facts.erase(arg, reason="asked by the user")
        print("erased", flush=True)
    elif mode == "reopen":
        hits = m.search("data engineer")  # the first thing served after the open
        print(sum("data engineer" in h.text.lower() for h in hits), flush=True)
    elif mode == "session":
        session = m.context("s-other")
        session.add("user", arg)
        print("ready", flush=True)
        sys.stdin.readline()  # the test erases meanwhile, from its own process
        session.end()
        m.contexts.wait()
        print("ended", flush=True)
    m.close(flush=False)


if __name__ == "__main__":
    main(*sys.argv[1:])
