"""What goes into an agent's prompt: memory formatted within a token budget (`injection`), transcripts
compressed (`compression`), plans that survive sessions (`plans`) and the stale-while-revalidate cache (`swr`).

May import `text` and `store`; pure functions where it can (injection, compression).
"""
