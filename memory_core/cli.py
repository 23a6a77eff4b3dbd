"""The `memory-core` command line (also `python -m memory_core`): one function per subcommand.

Every subcommand works on the memory of `Settings.from_env()`, the same settings as the dashboard
(MEMORY_CORE_HOME, MEMORY_CORE_DATABASE_URL, ...). A new subcommand is an `_add_<name>(subparsers, common)`
that sets `handler=cmd_<name>`, and a `cmd_<name>(args) -> int`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Callable, Sequence

from .scope import make_scope
from .settings import Settings

log = logging.getLogger(__name__)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level", default="WARNING", choices=LOG_LEVELS, type=str.upper,
                        help="what goes to stderr (default: WARNING)")
    parser = argparse.ArgumentParser(prog="memory-core", description="Long-term memory for LLM agents. Settings "
                                     "come from MEMORY_CORE_* environment variables (MEMORY_CORE_HOME, "
                                     "MEMORY_CORE_DATABASE_URL, ...).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_mcp(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
    except (ValueError, TypeError) as exc:
        parser.error(f"settings: {exc}")
    _configure_logging(args.log_level, settings)
    handler: Callable[[argparse.Namespace, Settings], int] = args.handler
    try:
        return handler(args, settings)
    except ValueError as exc:
        parser.error(str(exc))
    return 2  # not reached: parser.error exits


def _configure_logging(level: str, settings: Settings) -> None:
    # stderr only: over stdio, stdout is the protocol's.
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from .redact import install_log_redaction

    install_log_redaction(settings.secrets())


# -- mcp ---------------------------------------------------------------------------------------------


def _add_mcp(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "mcp", parents=[common], help="serve the memory to agents over the Model Context Protocol",
        description="Serve the memory over MCP: over stdio for one scope (what a desktop client starts), or "
                    "over streamable HTTP at /mcp, where every request must carry 'Authorization: Bearer "
                    "<secret>' of an API token (made on the dashboard's Access page) and the token decides "
                    "the scope and the role.")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    p.add_argument("--user", default=None, help="stdio: the user_id of the scope served (default: default)")
    p.add_argument("--agent", default=None, help="stdio: the agent_name of the scope served (default: default)")
    p.add_argument("--role", choices=("viewer", "editor"), default="editor",
                   help="stdio: viewer serves the scope read-only (default: editor)")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="http: the port (default: 8000)")
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until the client goes away (stdio) or SIGTERM/SIGINT; pending updates are flushed on the way out."""
    from .memory import Memory

    if args.transport == "http":
        if args.user is not None or args.agent is not None or args.role != "editor":
            raise ValueError("--user, --agent and --role choose the scope over stdio; over HTTP each request's "
                             "token decides its scope and role")
        if not 1 <= args.port <= 65535:
            raise ValueError(f"--port must be between 1 and 65535; got {args.port}")
    else:
        scope = make_scope(args.user or "default", args.agent or "default")

    with Memory(settings) as memory:  # closing flushes what is pending
        memory.start()
        if args.transport == "http":
            from .mcp.http import PATH, serve_http

            if args.host not in LOOPBACK:
                log.warning("serving on %s: tokens travel in the clear unless TLS is in front", args.host)
            host = f"[{args.host}]" if ":" in args.host else args.host
            print(f"memory-core MCP server at http://{host}:{args.port}{PATH} (a bearer token is required)",
                  file=sys.stderr, flush=True)
            serve_http(memory, host=args.host, port=args.port)
        else:
            from .mcp.server import serve_stdio

            serve_stdio(memory.scoped(user_id=scope.user_id, agent_name=scope.agent_name, role=args.role,
                                      actor="mcp:stdio"))
    return 0
