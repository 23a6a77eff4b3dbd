"""What goes into an agent's prompt: memory formatted within a token budget (`injection`), the dated passages a
query brings (`evidence`), transcripts compressed (`compression`), plans that survive sessions (`plans`) and the
stale-while-revalidate cache (`swr`).

May import `text` and `store`; pure functions where it can (injection, compression).
"""
