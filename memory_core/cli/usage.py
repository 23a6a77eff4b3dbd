"""`memory-core usage [--since YYYY-MM-DD] [--json]`: what memory cost, per scope and operation."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from datetime import datetime, timezone

from memory_core.settings import Settings


def add_usage(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser("usage", parents=[common], help="LLM and embedding tokens and cost, per scope and operation",
                            description="Sum the usage ledger (every LLM and embedding call) per scope and operation.")
    p.add_argument("--since", help="only calls from this day on (YYYY-MM-DD, UTC)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(handler=cmd_usage, parser=p)


def cmd_usage(args: argparse.Namespace, settings: Settings) -> int:
    from memory_core.memory import Memory

    since = None
    if args.since:
        try:
            since = datetime.fromisoformat(args.since).replace(tzinfo=timezone.utc)
        except ValueError:
            raise ValueError(f"--since takes a day, YYYY-MM-DD; got {args.since!r}") from None
    memory = Memory(settings, worker=False)
    try:
        totals = memory.admin.usage_totals(since=since)  # summed by the database, however many calls
    finally:
        memory.close(flush=False)
    rows: dict[tuple[str, str], list] = defaultdict(lambda: [0, 0, 0, 0.0, False])
    for t in totals:
        row = rows[(f"{t.user_id}/{t.agent_name}" if t.user_id else "(no scope)", t.operation)]
        row[0] += t.calls
        row[1] += t.input_tokens
        row[2] += t.output_tokens
        if t.cost_usd is not None:
            row[3] += t.cost_usd
            row[4] = True
    table = [{"scope": scope, "operation": op, "calls": v[0], "input_tokens": v[1], "output_tokens": v[2],
              "cost_usd": round(v[3], 6) if v[4] else None} for (scope, op), v in sorted(rows.items())]
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    if not table:
        print("No LLM or embedding calls recorded" + (f" since {args.since}." if args.since else "."))
        return 0
    print(f"{'scope':<40} {'operation':<12} {'calls':>7} {'input':>10} {'output':>10} {'cost $':>10}")
    for t in table:
        money = f"{t['cost_usd']:.4f}" if t["cost_usd"] is not None else "-"
        print(f"{t['scope']:<40} {t['operation']:<12} {t['calls']:>7} {t['input_tokens']:>10} {t['output_tokens']:>10} "
              f"{money:>10}")
    return 0
