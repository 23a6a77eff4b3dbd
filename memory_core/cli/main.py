"""The `memory-core` command line (also `python -m memory_core`): one function per subcommand.

Every subcommand works on the memory of `Settings.from_env()`, the same settings as the dashboard
(MEMORY_CORE_HOME, MEMORY_CORE_DATABASE_URL, ...). A new subcommand is an `_add_<name>(subparsers, common)`
that sets `handler=cmd_<name>`, and a `cmd_<name>(args, settings) -> int`. A misused option raises ValueError
(usage and exit status 2); a refused file or target is one line on stderr and exit status 2 (`Refused`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TextIO

from memory_core.cli.doctor import add_doctor
from memory_core.cli.usage import add_usage
from memory_core.portability.bundle_check import MODES
from memory_core.portability.records import FORMATS
from memory_core.scope import make_scope
from memory_core.settings import Settings

if TYPE_CHECKING:
    from memory_core.views.scoped import ScopedMemory

log = logging.getLogger(__name__)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
SHOWN = 10  # errors and notes listed in a readable summary; --json has them all


class Refused(Exception):
    """A file or target that a command will not take: one line on stderr, exit status 2, nothing changed."""


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level", default="WARNING", choices=LOG_LEVELS, type=str.upper,
                        help="what goes to stderr (default: WARNING)")
    parser = argparse.ArgumentParser(prog="memory-core", description="Long-term memory for LLM agents. Settings "
                                     "come from MEMORY_CORE_* environment variables (MEMORY_CORE_HOME, "
                                     "MEMORY_CORE_DATABASE_URL, ...).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_mcp(commands, common)
    _add_export(commands, common)
    _add_import(commands, common)
    add_doctor(commands, common)
    add_usage(commands, common)
    from memory_core.cli.tokens import add_token  # `token create | list | revoke`

    add_token(commands, common, Refused)
    _add_eval(commands, common)
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
    except Refused as exc:
        print(f"memory-core {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        args.parser.error(str(exc))
    return 2  # not reached: parser.error exits


def _configure_logging(level: str, settings: Settings) -> None:
    # stderr only: over stdio, stdout is the protocol's.
    logging.basicConfig(level=level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from memory_core.text.redact import install_log_redaction

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
    p.add_argument("--oauth", action="store_true", help="http: people sign in through the team's OIDC provider "
                   "(the dashboard's [auth] settings) and connect at /mcp/USER/AGENT with their grants")
    p.add_argument("--secrets", default=None, metavar="PATH",
                   help="--oauth: the secrets file whose [auth] names the provider (default: .streamlit/secrets.toml; "
                        "MEMORY_CORE_OIDC_CLIENT_ID, _CLIENT_SECRET, _SERVER_METADATA_URL override it)")
    p.add_argument("--public-url", default=None, metavar="URL",
                   help="--oauth: the server's public base URL, e.g. https://memory.acme.com (default: http://HOST:PORT)")
    p.set_defaults(handler=cmd_mcp, parser=p)


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    """Serve until the client goes away (stdio) or SIGTERM/SIGINT; pending updates are flushed on the way out,
    for at most shutdown_timeout_seconds (what is left stays queued for the next start)."""
    from memory_core.memory import Memory

    if args.transport == "http":
        if args.user is not None or args.agent is not None or args.role != "editor":
            raise ValueError("--user, --agent and --role choose the scope over stdio; over HTTP each request's "
                             "token decides its scope and role")
        if not 1 <= args.port <= 65535:
            raise ValueError(f"--port must be between 1 and 65535; got {args.port}")
        from memory_core.mcp.oidc import oauth_settings

        oidc = oauth_settings(args.oauth, secrets=args.secrets, public_url=args.public_url, host=args.host)
    elif args.oauth or args.secrets or args.public_url:
        raise ValueError("--oauth, --secrets and --public-url are for --transport http")
    else:
        scope = make_scope(args.user or "default", args.agent or "default")

    # On stderr (over stdio, stdout is the protocol's): a server started from another folder without
    # MEMORY_CORE_HOME would otherwise fill a new, empty ./memory_data there without a word.
    print(f"memory-core mcp: home {Path(settings.home).resolve()}, database {settings.safe_database_url()}"
          + ("" if os.environ.get("MEMORY_CORE_HOME") else " (MEMORY_CORE_HOME is not set: the default home, "
             "under the current folder)"), file=sys.stderr, flush=True)
    # closing flushes what is pending, for at most shutdown_timeout_seconds after the stop; the rest stays queued
    with Memory(settings) as memory, _closing_in_time(memory) as stopping:
        memory.start()
        if args.transport == "http":
            from memory_core.mcp.http import PATH, serve_http

            if args.host not in LOOPBACK:
                log.warning("serving on %s: tokens travel in the clear unless TLS is in front", args.host)
            host = f"[{args.host}]" if ":" in args.host else args.host
            app = None
            if oidc is not None:
                from memory_core.mcp.oauth_http import oauth_http_app

                issuer = (args.public_url or f"http://{host}:{args.port}").rstrip("/")
                app = oauth_http_app(memory.admin, oidc, issuer=issuer, host=args.host)
                print(f"memory-core MCP server: people sign in at {issuer}{PATH}/USER/AGENT; API tokens at "
                      f"{issuer}{PATH}", file=sys.stderr, flush=True)
            else:
                print(f"memory-core MCP server at http://{host}:{args.port}{PATH} (a bearer token is required)",
                      file=sys.stderr, flush=True)
            stopping["at"] = serve_http(memory.admin, host=args.host, port=args.port, app=app)
        else:
            from memory_core.mcp.server import serve_stdio

            serve_stdio(memory.scoped(user_id=scope.user_id, agent_name=scope.agent_name, role=args.role,
                                      actor="mcp:stdio"))
    return 0


@contextlib.contextmanager
def _closing_in_time(memory: Any) -> Iterator[dict[str, float | None]]:
    """Close `memory` within its shutdown_timeout_seconds of the moment the server was told to stop (`at`, a
    time.monotonic(); else now), so that a process manager's SIGTERM never has to become a SIGKILL."""
    stopping: dict[str, float | None] = {"at": None}
    try:
        yield stopping
    finally:
        spent = 0.0 if stopping["at"] is None else time.monotonic() - stopping["at"]
        memory.close(timeout=max(1.0, memory.settings.shutdown_timeout_seconds - spent))


# -- export ------------------------------------------------------------------------------------------


def _add_export(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "export", parents=[common], help="write a bundle (one zip) of every scope, or of the scopes named",
        description="Write a memory_core bundle: facts with their validity and audit history, summaries, "
                    "MEMORY.md and its versions, daily logs, dream diaries and plans of the chosen scopes. "
                    "`memory-core import` reads it back, into this or another database.")
    p.add_argument("path", help="the zip to write")
    p.add_argument("--scope", action="append", metavar="USER/AGENT",
                   help="a scope to export (repeat for more; default: every scope)")
    p.add_argument("--force", action="store_true", help="overwrite the file if it exists")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(handler=cmd_export, parser=p)


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    """Write the bundle (export_bundle writes a temporary file beside it and renames it: never half a bundle)."""
    from memory_core.memory import Memory

    target = Path(args.path)
    if target.is_dir():
        raise Refused(f"{target} is a folder; give the path of the zip to write")
    if target.exists() and not args.force:
        raise Refused(f"{target} exists; --force overwrites it")
    scopes = None if args.scope is None else [_scope_key(value) for value in args.scope]
    _exit_on_sigterm()
    memory = Memory(settings, worker=False)  # what is queued is the worker's of the app or the MCP server
    try:
        with memory.acting_as("cli:export"):
            counts = memory.export_bundle(target, scopes=scopes)
    except OSError as exc:
        raise Refused(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        memory.close(flush=False)  # pending updates stay queued for the worker
    if args.json:
        print(json.dumps({"path": str(target), **counts}, indent=2))
    else:
        kinds = ("scopes", "facts", "audit", "summaries", "core_versions", "plans", "documents")
        print(f"Wrote {target}: {_counted(counts, kinds)}")
    return 0


def _exit_on_sigterm() -> None:
    """SIGTERM ends the command as Ctrl-C does, through the `finally` that closes the memory without flushing
    (the library's own handler would first process everything queued)."""
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))


def _scope_key(value: str) -> str:
    if value.count("/") != 1:
        raise ValueError(f"--scope takes USER/AGENT; got {value!r:.80}")
    return make_scope(*value.split("/")).key


# -- import ------------------------------------------------------------------------------------------


def _add_import(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "import", parents=[common], help="import a bundle, or another tool's memory or conversations",
        description="Import a memory_core bundle (it carries its own scopes), or an export of DeerFlow, mem0 / "
                    "OpenMemory, ChatGPT, Claude, or a Markdown workspace (OpenClaw, CowAgent) into one scope. "
                    "The format is recognised by content unless --format names it. Importing the same file "
                    "again adds nothing. Conversations go to the update queue, which the worker of the "
                    "dashboard or of `memory-core mcp` processes at the configured rate; --wait processes "
                    "them before exiting.")
    p.add_argument("path", help="a file, folder or zip")
    p.add_argument("--format", choices=("bundle", *FORMATS), default=None, help="default: recognised by content")
    p.add_argument("--user", default=None, help="the user_id to import into (not for bundles; default: default)")
    p.add_argument("--agent", default=None, help="the agent_name to import into (not for bundles; default: default)")
    p.add_argument("--dry-run", action="store_true", help="say what would be imported; change nothing")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="bundles: skip keeps what exists (default), replace lets the bundle win")
    p.add_argument("--wait", action="store_true",
                   help="process the queued conversations now (with the LLM when one is configured)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_import, parser=p)


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    """Check the options and the file's kind, then import as `cli:import`; a file that cannot be read is
    Refused before anything changes."""
    from memory_core.memory import Memory
    from memory_core.portability.bundle import is_bundle

    path = Path(args.path)
    if not path.exists():
        raise Refused(f"{path}: no such file or folder")
    bundle = args.format == "bundle" or (args.format is None and is_bundle(path))
    if bundle and (args.user is not None or args.agent is not None):
        raise ValueError("--user and --agent are not for a bundle: it carries its own scopes")
    if not bundle and args.mode is not None:
        raise ValueError("--mode is for bundles; another tool's file is imported once and never overwrites")
    if args.wait and (bundle or args.dry_run):
        raise ValueError("--wait processes queued conversations; " +
                         ("a bundle queues none" if bundle else "a dry run queues none"))
    scope = None if bundle else make_scope(args.user or "default", args.agent or "default")

    progress = Progress(sys.stderr)
    _exit_on_sigterm()
    memory = Memory(settings, worker=False)  # what is queued is the worker's of the app or the MCP server
    # a file goes into one scope: through the view of it, as cli:import; a bundle carries its own scopes
    view = None if bundle else memory.scoped(user_id=scope.user_id, agent_name=scope.agent_name, actor="cli:import")
    try:
        with memory.acting_as("cli:import"):
            try:
                if bundle:
                    result = memory.import_bundle(path, mode=args.mode or "skip", dry_run=args.dry_run)
                else:
                    report = view.import_file(path, format=args.format, dry_run=args.dry_run,
                                              progress=progress.importing)
                    result = dataclasses.asdict(report)
            except ValueError as exc:  # the file cannot be read or is not what it should be: nothing was written
                raise Refused(str(exc) if path.name in str(exc) else f"{path.name}: {exc}") from None
            except OSError as exc:  # a bundle's documents not written stay journaled: the next open writes them
                pending = memory.status().restores_pending
                raise Refused(f"{path.name}: cannot write to {settings.home}: {exc.strerror or exc}; " + (
                    f"its {pending:,} document(s) not written yet are written the next time memory is opened"
                    if pending else "nothing was imported")) from None
            except Exception as exc:  # a fault of ours, not the file's: one line here, the traceback in the log
                log.debug("importing %s failed", path, exc_info=True)
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                raise Refused(f"{path.name}: the import failed ({type(exc).__name__}: {first}); run it again with "
                              "--log-level DEBUG for the details") from None
            finally:
                progress.done()
            if not bundle:
                result["scope"] = scope.key
                if args.wait:
                    facts_before = view.facts.count()
                    result["processed"] = _process_queue(view, progress)
                    result["facts_from_conversations"] = view.facts.count() - facts_before
                result["pending"] = view.queue.pending()
    finally:
        memory.close(flush=False)  # what is queued stays for the worker, unless --wait processed it
    if args.json:
        print(json.dumps({"kind": "bundle" if bundle else "file", "path": str(path), **result}, indent=2,
                         default=str))
    else:
        print(_bundle_summary(path, result) if bundle else _file_summary(path, result, args.wait))
    return 0


def _process_queue(view: "ScopedMemory", progress: "Progress") -> int:
    """The scope's queued updates, flushed in this thread (where the actor is set), a percentage on stderr
    from another; other scopes' updates are left to their worker."""
    total = view.queue.pending()
    stop = threading.Event()

    def report() -> None:
        while not stop.wait(0.5):
            progress.processing(total - view.queue.pending(), total)

    watcher = threading.Thread(target=report, name="memory-core-import-progress", daemon=True)
    watcher.start()
    try:
        processed = view.queue.flush()
    finally:
        stop.set()
        watcher.join()
    progress.processing(total - view.queue.pending(), total)
    progress.done()
    return processed


class Progress:
    """A percentage line on stderr for work that takes a while (quiet for the first second): redrawn in
    place on a terminal, a line per ten percent elsewhere."""

    def __init__(self, stream: TextIO, quiet_seconds: float = 1.0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.quiet_seconds = quiet_seconds
        self.last: int | None = None
        self.open = False

    def importing(self, fraction: float, what: str) -> None:
        self._show("importing", fraction, what)

    def processing(self, done: int, total: int) -> None:
        self._show("processing the queue", done / total if total else 1.0, f"{done} of {total} conversations")

    def _show(self, label: str, fraction: float, what: str) -> None:
        percent = max(0, min(100, int(fraction * 100)))
        if time.monotonic() - self.start < self.quiet_seconds or percent == self.last:
            return
        if not self.tty and self.last is not None and percent // 10 == self.last // 10 and percent < 100:
            return
        self.last = percent
        line = f"{label}: {percent:3d}%  {what}"
        if self.tty:
            self.stream.write(f"\r{line[:100]:<100}")
            self.open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
        self.open, self.last, self.start = False, None, time.monotonic()


def _counted(counts: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{counts.get(k, 0):,} {k.replace('_', ' ')}" for k in keys)


def _listed(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    lines = [f"  {title} ({len(items):,}):"] + [f"    - {item}" for item in items[:SHOWN]]
    if len(items) > SHOWN:
        lines.append(f"    ... and {len(items) - SHOWN:,} more (--json lists them all)")
    return lines


def _file_summary(path: Path, r: dict[str, Any], waited: bool) -> str:
    head = "Dry run, nothing changed: would import" if r["dry_run"] else "Imported"
    verb = "would be queued" if r["dry_run"] else "queued"
    lines = [f"{head} {r['format']} from {path.name} into {r['scope']}",
             f"  facts: {r['facts_added']:,} added, {r['facts_skipped']:,} skipped (known or below the threshold)",
             f"  summaries: {r['summaries']:,}    documents: {r['documents']:,}",
             f"  conversations: {r['conversations']:,} {verb}, {r['conversations_skipped']:,} imported before"]
    lines += _listed("errors, left out", r["errors"]) + _listed("notes", r["notes"])
    if r["dry_run"] and r["sample"]:
        lines += ["  sample:"] + [f"    - {item[:100]}" for item in r["sample"]]
    if waited:
        lines.append(f"Processed {r['processed']:,} queued update(s) of {r['scope']} now: it has "
                     f"{r['facts_from_conversations']:,} more fact(s).")
    if r["pending"]:
        lines.append(f"{r['pending']:,} conversation(s) of {r['scope']} wait in the update queue: the worker of the "
                     "dashboard or of `memory-core mcp` processes them (or import again with --wait).")
    return "\n".join(lines)


def _bundle_summary(path: Path, r: dict[str, Any]) -> str:
    head = "Dry run, nothing changed: would import" if r["dry_run"] else "Imported"
    scopes = r["scopes"]
    shown = ", ".join(scopes[:SHOWN]) + (f" and {len(scopes) - SHOWN:,} more" if len(scopes) > SHOWN else "")
    return "\n".join([
        f"{head} bundle {path.name} (mode {r['mode']}): {len(scopes):,} scope(s): {shown or 'none'}",
        f"  {_counted(r, ('facts', 'audit', 'summaries', 'core_versions', 'plans', 'documents'))}",
        f"  kept as they are: {r.get('facts_skipped', 0):,} facts, {r.get('documents_skipped', 0):,} documents",
    ])


# -- eval --------------------------------------------------------------------------------------------


def _add_eval(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = commands.add_parser(
        "eval", parents=[common], help="measure recall and injected context on conversations in LoCoMo's format",
        description="Run conversations in LoCoMo's format (a JSON list of samples with 'conversation' and 'qa') "
                    "through a fresh temporary memory (your settings' models; your memory is not touched, its "
                    "usage ledger records the LLM calls, under the daily token budget of --user/--agent) in two modes: 'turns' stores each turn as a fact, 'pipeline' gives each session to "
                    "the memory as a person's conversation at its date (update, daily log, dream). Reports, per "
                    "mode and question category (1-4; 5, adversarial, is left out): recall@k of the evidence "
                    "turns and answer_in_context (the answer's words in format_for_injection(query=question)); "
                    "with an LLM configured also qa_accuracy, judged by the model, and the tokens spent.")
    p.add_argument("path", metavar="FILE", help="a LoCoMo-format JSON file")
    p.add_argument("--k", type=int, default=10, help="search results per question for recall@k (default: 10)")
    p.add_argument("--mode", choices=("turns", "pipeline"), action="append", default=None,
                   help="run only this mode (may be repeated; default: both)")
    p.add_argument("--offline", action="store_true", help="leave the configured LLM out (no qa_accuracy)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="the injection budget to measure at (default: the settings' max_injection_tokens)")
    p.add_argument("--user", default=None, help="with an LLM: the user_id of the scope whose daily token budget "
                   "and usage ledger the evaluation's LLM calls are under (default: eval)")
    p.add_argument("--agent", default=None, help="with an LLM: that scope's agent_name (default: default)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(handler=cmd_eval, parser=p)


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """A file that is not LoCoMo's format, or a paying scope whose daily budget is spent, is Refused; an LLM
    that fails ends the run with exit status 1."""
    from memory_core.errors import BudgetExceeded, LLMError
    from memory_core.evaluation import EVAL_SCOPE, MODES, format_report, load_samples, run_eval

    if args.k < 1:
        raise ValueError(f"--k must be at least 1; got {args.k}")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise ValueError(f"--max-tokens must be at least 1; got {args.max_tokens}")
    try:
        samples = load_samples(args.path)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    modes = list(dict.fromkeys(args.mode or MODES))
    payer = make_scope(args.user or EVAL_SCOPE.user_id, args.agent or EVAL_SCOPE.agent_name)
    try:
        report = run_eval(samples, settings, k=args.k, modes=modes, offline=args.offline, max_tokens=args.max_tokens,
                          payer=payer)
    except BudgetExceeded as exc:
        raise Refused(str(exc)) from None
    except LLMError as exc:
        print(f"memory-core eval: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report) if args.json else format_report(report))
    return 0
