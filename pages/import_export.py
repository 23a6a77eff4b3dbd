"""Import / Export: other tools' memory and conversations into the scope in view; bundles in and out."""

import tempfile
from datetime import datetime

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import (admin_handle, ensure_entrypoint, escape_markdown, header, import_slot,
                                          readable_scopes, save_uploads, upload_limit_mib, view, who)
from memory_core.errors import MemoryCoreError
from memory_core.portability.bundle import bundle_bytes, import_bundle_as, is_bundle

MAX_IMPORT_MIB = 100  # server.maxUploadSize; bigger exports go through `memory-core import`
MAX_FOLDER_FILES = 5_000  # a Markdown workspace: a MEMORY.md and a log a day for years
FORMATS = {"bundle": "memory_core bundle", "deerflow": "DeerFlow memory.json", "mem0": "mem0 / OpenMemory",
           "chatgpt": "ChatGPT data export", "claude": "Claude data export", "markdown": "Markdown workspace"}

ensure_entrypoint()
admin = admin_handle()  # bundles span scopes
scoped = view()
me = who()
header("Import / Export", scoped)
tab_in, tab_out = st.tabs(["Import", "Export"])


BUSY = ("Another import is running on this server; imports run one at a time. Try again in a moment: nothing "
        "was changed.")


def _run(uploads: list, *, dry_run: bool, mode: str = "skip", progress=None) -> dict:
    """Read the upload and import it (or preview the import): {"kind", "result"}, {"error"}, or {"busy"}
    while another import of this process runs."""
    with import_slot() as got:
        if not got:
            return {"busy": True}
        return _run_alone(uploads, dry_run=dry_run, mode=mode, progress=progress)


def _run_alone(uploads: list, *, dry_run: bool, mode: str, progress) -> dict:
    with tempfile.TemporaryDirectory(prefix="memory-core-import-") as folder:
        path = save_uploads(uploads, folder)
        try:
            if is_bundle(path):
                return {"kind": "bundle", "result": import_bundle_as(admin, me, path, mode=mode, dry_run=dry_run)}
            report = scoped.import_file(path, dry_run=dry_run, progress=progress)
            return {"kind": report.format, "result": report}
        except (ValueError, PermissionError, MemoryCoreError) as exc:
            return {"error": str(exc)}


def _show_report(report, done: bool) -> None:
    verb = "" if done else "would be "
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(f"Facts {verb}added", report.facts_added)
    c2.metric("Summaries", report.summaries)
    c3.metric("Documents", report.documents)
    c4.metric(f"Conversations {verb}queued", report.conversations)
    if report.facts_skipped or report.conversations_skipped:
        st.caption(f"Left out: {report.facts_skipped} facts already here or below the confidence threshold, "
                   f"{report.conversations_skipped} conversations imported before.")
    if report.sample and not done:
        st.caption("A sample of what the file holds")
        st.dataframe(pd.DataFrame({"item": report.sample}), hide_index=True, width="stretch")
    if report.notes:  # what the import did with the file (categories mapped, say): in view, not folded away
        st.info("\n".join(f"- {escape_markdown(line)}" for line in report.notes[:10]), icon=":material/info:")
        if len(report.notes) > 10:
            with st.expander(f"All {len(report.notes)} notes"):
                st.dataframe(pd.DataFrame({"notes": report.notes}), hide_index=True, width="stretch")
    if report.errors:
        label = "Problems in the file (those items are left out)"
        with st.expander(f"{label}: {len(report.errors)}", expanded=len(report.errors) <= 5):
            st.dataframe(pd.DataFrame({"problems in the file": report.errors}), hide_index=True, width="stretch")


BUNDLE_WORDS = {"facts": "facts", "facts_skipped": "facts already here, kept", "audit": "history entries",
                "summaries": "summaries", "core_versions": "MEMORY.md versions", "plans": "plans",
                "documents": "documents (daily logs, diaries, MEMORY.md)",
                "documents_skipped": "documents already here, kept", "dreamt_days": "days already dreamt",
                "dream_state": "dream schedules", "provenance": "sources of summary sentences"}


def _show_bundle(result: dict, done: bool) -> None:
    scopes = result["scopes"]
    elsewhere = [s for s in scopes if s != scoped.scope.key]
    st.write("A bundle restores into the scopes it was exported from: "
             + ", ".join(f"**{escape_markdown(s)}**" for s in scopes) + ".")
    if elsewhere:
        st.info(f"Not into {escape_markdown(scoped.scope.key)}, the scope in view: after the import, pick "
                + ", ".join(escape_markdown(s) for s in elsewhere[:5]) + " in the sidebar to see it.",
                icon=":material/info:")
    counts = {k: v for k, v in result.items() if isinstance(v, int) and not isinstance(v, bool)}
    st.caption("Written:" if done else "Would be written (the rest is here already):")
    st.dataframe(pd.DataFrame([{"what": BUNDLE_WORDS.get(k, k.replace("_", " ")), "how many": v}
                               for k, v in counts.items()], columns=["what", "how many"]), hide_index=True)


def _show_done(outcome: dict) -> None:
    if outcome["kind"] == "bundle":
        st.success("Bundle imported.")
        _show_bundle(outcome["result"], done=True)
        return
    report = outcome["result"]
    st.success(f"Imported into {escape_markdown(scoped.scope.key)}.")
    _show_report(report, done=True)
    if report.conversations:
        st.info(f"{report.conversations} conversations wait in this scope's update queue; the worker turns them "
                "into facts in the background and writes each into the daily log of the day it happened. The "
                "sidebar shows how many are pending.")


with tab_in:
    st.caption("Bring memory in from " + ", ".join(f"{v} (`{k}`)" for k, v in FORMATS.items() if k != "bundle")
               + ", or restore a memory_core bundle. A folder can be uploaded as it is, or as a zip. It is checked "
                 "whole before anything changes, and importing the same file again adds nothing.")
    if not scoped.can_write:
        st.info(f"Your role in {scoped.scope.key} is {scoped.role}: you can export this scope, not import into it.")
    else:
        limit = upload_limit_mib(admin, me, MAX_IMPORT_MIB)  # a sandbox's anonymous visitor: a small one
        cap = limit if limit < MAX_IMPORT_MIB else None  # the browser refuses a bigger file before sending it
        if done := st.session_state.pop("_import_done", None):  # the last import's result, the upload cleared
            _show_done(done)
        gen = st.session_state.get("_import_gen", 0)  # a new uploader after an import: no stale preview
        upload = st.file_uploader("File to import", type=["zip", "json", "jsonl", "gz", "md"],
                                  key="import_file" if not gen else f"import_file_{gen}", max_upload_size=cap)
        folder = st.file_uploader("…or a folder (a Markdown workspace: MEMORY.md and memory/)", type=["md", "json"],
                                  accept_multiple_files="directory",
                                  key="import_folder" if not gen else f"import_folder_{gen}", max_upload_size=cap)
        uploads = [upload] if upload is not None else list(folder or [])
        size = sum(u.size for u in uploads)
        if len(uploads) > MAX_FOLDER_FILES:
            st.error(f"The folder holds {len(uploads):,} files; this page takes up to {MAX_FOLDER_FILES:,}. Use "
                     "`memory-core import` for it.")
        elif size > limit * 1024 ** 2:  # refused before a byte of it is read
            st.error(f"That is {size / 1024 ** 2:,.1f} MiB; this page takes up to {limit} MiB"
                     + (" in a sandbox." if cap else ". Use `memory-core import` for bigger exports."))
        elif uploads:
            key = (tuple(u.file_id for u in uploads), scoped.scope.key)
            if st.session_state.get("_import_preview_key") != key:
                with st.spinner("Reading the file…"):
                    preview = _run(uploads, dry_run=True)
                if "busy" not in preview:  # a busy answer is not kept: the next run tries again
                    st.session_state["_import_preview"], st.session_state["_import_preview_key"] = preview, key
            else:
                preview = st.session_state["_import_preview"]
            if "busy" in preview:
                st.warning(BUSY)
                st.button("Try again", key="import_retry")
            elif "error" in preview:
                st.error(f"Cannot import this file: {escape_markdown(preview['error'])}. Nothing was changed.")
            else:
                kind = preview["kind"]
                st.write(f"Detected format: **{FORMATS.get(kind, kind)}**"
                         + ("" if kind == "bundle" else f", into **{escape_markdown(scoped.scope.key)}**"))
                mode = "skip"
                if kind == "bundle":
                    _show_bundle(preview["result"], done=False)
                    mode = st.radio("Where the bundle and this memory differ", ["skip", "replace"], horizontal=True,
                                    key="import_mode", captions=["keep what is here", "let the bundle win"])
                else:
                    _show_report(preview["result"], done=False)
                if st.button("Import", type="primary", key="import_go"):
                    bar = st.progress(0.0, text="Importing…")
                    outcome = _run(uploads, dry_run=False, mode=mode,
                                   progress=lambda fraction, what: bar.progress(min(max(fraction, 0.0), 1.0), text=what))
                    bar.progress(1.0, text="Done")
                    if "busy" not in outcome:
                        st.session_state.pop("_import_preview_key", None)  # the next look previews anew
                    if "busy" in outcome:
                        st.warning(BUSY)
                    elif "error" in outcome:
                        st.error(f"Nothing was imported: {escape_markdown(outcome['error'])}")
                    else:
                        st.session_state["_import_done"] = outcome
                        st.session_state["_import_gen"] = gen + 1
                        st.rerun()

with tab_out:
    st.caption("A bundle is one zip with everything of a scope: facts with their validity and history, summaries, "
               "every MEMORY.md version, daily logs, dream diaries and plans. It restores with `memory-core import` "
               "or on this page, into SQLite or PostgreSQL alike.")
    scopes = readable_scopes(admin, me)
    choices = {f"This scope ({scoped.scope.key})": [scoped.scope]}
    if len(scopes) > 1:
        choices[f"All {len(scopes)} scopes you may read"] = scopes
    chosen = st.radio("What to export", list(choices), key="export_what")
    if st.button("Prepare bundle", key="export_prepare"):
        with st.spinner("Writing the bundle…"):
            data = bundle_bytes(admin, [s.key for s in choices[chosen]])
        stem = scoped.scope.key.replace("/", "-") if len(choices[chosen]) == 1 else "all"
        st.session_state["_export"] = (chosen, scoped.scope.key, f"memory_core-{stem}-{datetime.now():%Y%m%d-%H%M}.zip",
                                       data)
    exported = st.session_state.get("_export")
    if exported and exported[:2] == (chosen, scoped.scope.key):  # never a bundle prepared for another choice
        _choice, _scope, name, data = exported
        st.download_button(f"Download {name} ({len(data) / 1024:,.0f} KiB)", data, file_name=name,
                           mime="application/zip", key="export_download", on_click="ignore")
