"""Ingest: paste or upload a conversation, then queue it or process it now."""

import secrets
from datetime import datetime

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import MAX_INGEST_BYTES, MAX_PASTE_CHARS, ensure_entrypoint, escape_markdown, header, view
from memory_core.dashboard.demo import load_demo
from memory_core.errors import IngestError, MemoryCoreError
from memory_core.portability.ingest import parse_conversation

ensure_entrypoint()
memory = view()
header("Ingest", memory)
if not memory.can_write:
    st.info(f"Your role in {memory.scope.key} is {memory.role}: you can read this scope's memory, not add to it.")
    st.stop()
st.caption("A `User:`/`Assistant:` transcript, Markdown, OpenAI-style messages JSON, JSONL, or a LoCoMo sample.")

pasted = st.text_area("Conversation", height=200, key="ingest_text", max_chars=MAX_PASTE_CHARS,
                      placeholder="User: I love hiking in the Alps.\nAssistant: Great!")
upload = st.file_uploader("…or upload a file", type=["txt", "md", "json", "jsonl"], key="ingest_file")
thread_id = st.text_input("Thread id (optional)", key="ingest_thread", max_chars=256,
                          placeholder="empty: each ingest is a conversation of its own",
                          help="Messages of one thread id are one conversation: a second ingest with the same id "
                               "replaces what is still queued under it. Leave it empty to keep each paste apart.")
thread_id = thread_id.strip() or f"paste-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
how = st.radio("How", ["Process now", "Queue (debounced)"], horizontal=True, key="ingest_how")

if st.button("Ingest", type="primary", key="ingest_go"):
    try:
        if upload is not None:
            if upload.size > MAX_INGEST_BYTES:  # refused before a byte of it is read
                raise IngestError(f"the file is {upload.size // 1024:,} KiB; the limit is {MAX_INGEST_BYTES // 1024:,} KiB")
            messages = parse_conversation(upload.getvalue(), upload.name)
        else:
            messages = parse_conversation(pasted)
        if how == "Process now":
            with st.status(f"Processing {len(messages)} messages…", expanded=True) as status:
                st.write("Extracting facts" + (" (offline heuristics)" if memory.offline
                                               else f" with {escape_markdown(memory.settings.llm_model)}"))
                result = memory.update(messages, thread_id=thread_id)
                st.write("Feeding the context tier (its trimming reaches the daily log)")
                session = memory.context(thread_id)
                for m in messages:
                    session.add(m["role"], m["content"])
                session.end()
                memory.wait_for_flushes()
                status.update(label="Done", state="complete")
            st.success(f"Added {len(result.added)} facts, skipped {len(result.skipped)}"
                       + (f", superseded {len(result.superseded)}" if result.superseded else "") + ".")
            if result.added:
                st.dataframe(pd.DataFrame([{"id": f.id, "content": f.content, "category": f.category,
                                            "confidence": f.confidence} for f in result.added]), hide_index=True)
            if result.skipped:
                st.dataframe(pd.DataFrame(result.skipped, columns=["content", "reason"]), hide_index=True)
        else:
            memory.queue.add(messages, thread_id=thread_id)
            st.success(f"Queued {len(messages)} messages for thread {escape_markdown(thread_id)}; processed after "
                       f"{memory.settings.debounce_seconds:.0f}s of quiet.")
    except IngestError as exc:
        st.error(f"Cannot read this conversation: {escape_markdown(str(exc))}. Nothing was changed.")
    except (MemoryCoreError, ValueError) as exc:
        st.error(f"Nothing was stored: {escape_markdown(str(exc))}")

st.divider()
st.subheader("Demo data")
st.caption("A sample conversation written for memory_core (works offline): facts, a daily log, a dream.")
if memory.facts.count() == 0:
    if st.button("Load demo data", key="load_demo"):
        with st.spinner("Loading demo data…"):
            outcome = load_demo(memory)
        st.success(f"Demo loaded: {outcome['facts']} facts added.")
else:
    st.warning("This scope already holds memory. The demo conversation would change it (it moves the user to "
               "another city, supersedes facts and rewrites MEMORY.md), so it loads only into an empty scope. "
               "Open a new scope with it instead.", icon=":material/warning:")
    if st.button("Open a new scope with the demo data", key="load_demo_new"):
        from memory_core.dashboard.demo_scope import open_demo_scope

        with st.spinner("Loading demo data…"):
            refusal = open_demo_scope("conversation", load_demo)
        st.warning(refusal)

failed = memory.queue.failed()
if failed:
    st.subheader("Failed updates")
    st.dataframe(pd.DataFrame([{"thread": i.thread_id, "attempts": i.attempts, "error": i.last_error,
                                "queued by": i.actor or ""} for i in failed]), hide_index=True)
    if st.button("Retry failed updates", key="ingest_retry"):
        st.info(f"{memory.queue.retry()} update(s) queued again.")
