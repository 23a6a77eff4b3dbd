"""`memory-core token create | list | revoke`: API tokens for agents, for a server without the dashboard.

The secret is printed once, on stdout, by `create`; only its hash is stored, and nothing else ever shows it.
Every change is audited as `cli:token` (the access log of the dashboard's Access page).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memory_core.policy.roles import ROLES

if TYPE_CHECKING:
    from memory_core.policy.access import ApiToken
    from memory_core.settings import Settings
    from memory_core.views.admin import Admin

ACTOR = "cli:token"
MAX_EXPIRES_DAYS = 3650


def add_token(commands: argparse._SubParsersAction, common: argparse.ArgumentParser,
              refused: type[Exception]) -> None:
    """The `token` subcommand and its three actions; `refused` is the CLI's one-line refusal."""
    p = commands.add_parser(
        "token", parents=[common], help="create, list and revoke the API tokens agents use over MCP",
        description="API tokens for agents: each is bound to one scope (user/agent) and one role, and is what "
                    "an MCP client sends as 'Authorization: Bearer <secret>' to `memory-core mcp --transport "
                    "http`. The secret is printed once, when the token is created.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    create = actions.add_parser("create", parents=[common], help="make a token and print its secret once")
    create.add_argument("name", help="a name to know it by (unique among active tokens), e.g. ci-bot")
    create.add_argument("--user", required=True, help="the user_id of the token's scope")
    create.add_argument("--agent", required=True, help="the agent_name of the token's scope")
    create.add_argument("--role", choices=ROLES, default="editor", help="default: editor")
    create.add_argument("--expires-days", type=int, default=None, metavar="N",
                        help=f"the token stops working after N days (1-{MAX_EXPIRES_DAYS}; default: never)")
    create.add_argument("--json", action="store_true", help="print the token and its secret as JSON")

    listed = actions.add_parser("list", parents=[common], help="the tokens (never their secrets)")
    listed.add_argument("--json", action="store_true", help="print them as JSON")

    revoke = actions.add_parser("revoke", parents=[common], help="stop a token at once (it is kept, revoked)")
    revoke.add_argument("id", help="the token's id (tok_...), as `token list` shows it")

    for sub in (create, listed, revoke):
        sub.set_defaults(handler=lambda args, settings: cmd_token(args, settings, refused), parser=sub)
    p.set_defaults(parser=p)


def cmd_token(args: argparse.Namespace, settings: "Settings", refused: type[Exception]) -> int:
    """Run one token action on the memory of `settings`, as `cli:token`."""
    from memory_core.memory import Memory

    if args.action == "create" and args.expires_days is not None and not 1 <= args.expires_days <= MAX_EXPIRES_DAYS:
        raise ValueError(f"--expires-days must be between 1 and {MAX_EXPIRES_DAYS}; got {args.expires_days}")
    memory = Memory(settings, worker=False)
    try:
        with memory.acting_as(ACTOR):
            if args.action == "create":
                return _create(memory.admin, args)
            if args.action == "list":
                return _list(memory.admin, args)
            try:
                memory.admin.access.revoke_token(args.id)
            except KeyError:
                raise refused(f"no token with id {args.id!r:.80} (`memory-core token list` shows them)") from None
            print(f"Revoked {args.id}: its next request is refused.")
            return 0
    finally:
        memory.close(flush=False)


def _create(admin: "Admin", args: argparse.Namespace) -> int:
    expires = None
    if args.expires_days is not None:
        expires = admin.now() + timedelta(days=args.expires_days)
    token, secret = admin.access.create_token(args.name, user_id=args.user, agent_name=args.agent,
                                              role=args.role, expires_at=expires)
    if args.json:
        print(json.dumps({**_as_dict(token), "secret": secret}, indent=2))
    else:
        print(f"Created {token.id} '{token.name}': {token.role} of {token.scope.key}, "
              f"{'expires ' + _when(token.expires_at) if token.expires_at else 'never expires'}.", file=sys.stderr)
        print("The secret, shown this once (send it as 'Authorization: Bearer <secret>'):", file=sys.stderr)
        print(secret)
    return 0


def _list(admin: "Admin", args: argparse.Namespace) -> int:
    tokens = admin.access.tokens()
    now = admin.now()
    if args.json:
        print(json.dumps([{**_as_dict(t), "active": t.active(now)} for t in tokens], indent=2))
        return 0
    if not tokens:
        print("No tokens yet: `memory-core token create NAME --user U --agent A` makes one.")
        return 0
    rows = [("ID", "NAME", "SCOPE", "ROLE", "STATE", "EXPIRES", "LAST USED")]
    for t in tokens:
        state = "revoked" if t.revoked else ("active" if t.active(now) else "expired")
        rows.append((t.id, t.name, t.scope.key, t.role, state, _when(t.expires_at) or "never",
                     _when(t.last_used_at) or "never"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def _as_dict(token: ApiToken) -> dict[str, Any]:
    return {"id": token.id, "name": token.name, "user_id": token.user_id, "agent_name": token.agent_name,
            "role": token.role, "created_at": token.created_at.isoformat(),
            "expires_at": token.expires_at.isoformat() if token.expires_at else None,
            "last_used_at": token.last_used_at.isoformat() if token.last_used_at else None,
            "revoked": token.revoked, "created_by": token.created_by}


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else ""
