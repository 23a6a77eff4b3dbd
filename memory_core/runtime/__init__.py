"""What runs in the background: the persisted update queue (`queue`) on its own threads (`lanes`), the
worker's scheduler (`worker`), leases across processes (`leases`), the nightly dream's schedule
(`dream_schedule`), starting and closing them (`lifecycle`) and closing at exit (`exit_hooks`). All of it is
built by the composition root.

May import `store`, `text`, `policy` and the shared modules; it is handed callables, never the facade.
"""
