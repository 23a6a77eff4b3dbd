"""`memory-core doctor [--user U --agent A] [--json]`: the consistency check of memory_core.consistency.doctor, per scope.

Exit status 0 when the copies agree, 1 when something is reported (so that a script or CI can act on it)."""

from __future__ import annotations

import argparse
import json

from memory_core.scope import make_scope
from memory_core.settings import Settings


def add_doctor(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "doctor", parents=[common], help="list contradictions between the copies of what memory knows",
        description="Check each scope (or the one named): sentences of the summaries or MEMORY.md that state a "
                    "fact no longer true, and valid facts that disagree on something that has one value (where "
                    "the user lives, works, their name). Exit status 1 when anything is found.")
    p.add_argument("--user", help="the scope's user (with --agent; default: every scope)")
    p.add_argument("--agent", help="the scope's agent")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(handler=cmd_doctor, parser=p)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from memory_core.memory import Memory

    if (args.user is None) != (args.agent is None):
        raise ValueError("--user and --agent go together")
    memory = Memory(settings, worker=False)
    try:
        scopes = [make_scope(args.user, args.agent)] if args.user else memory.admin.scopes()
        report = {scope.key: [f.to_dict() for f in memory.scoped(user_id=scope.user_id,
                                                                 agent_name=scope.agent_name).doctor()]
                  for scope in scopes}
    finally:
        memory.close(flush=False)
    found = sum(len(v) for v in report.values())
    if args.json:
        print(json.dumps({"scopes": report, "findings": found}, indent=2))
        return 1 if found else 0
    for key, findings in report.items():
        for f in findings:
            print(f"{key}\t{f['kind']}\t{f['place']}\t{f['text']}\t({', '.join(f['factIds'])}: {f['advice']})")
    print(f"{found} finding(s) in {len(report)} scope(s)" if found else f"No contradictions in {len(report)} scope(s).")
    return 1 if found else 0
