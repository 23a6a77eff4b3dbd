"""By hand, as root (it mounts): an erase on a real full disk (a 2 MiB tmpfs holding the documents, filled up),
then a reopen; prints whether the erase failed with ENOSPC and whether anything still holds the text after the
first read. `PYTHONPATH=$PWD python tests/consistency/erase_full_disk_tmpfs.py` (not collected by pytest: it
needs root and mount; tests/consistency/test_erase_final.py covers the same with MEMORY_CORE_ERASE_FAULT)."""

import errno
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.getcwd())
from tests.conftest import make_memory  # noqa: E402
from tests.consistency.test_propagation import GLOBEX  # noqa: E402

mnt = Path("/tmp/erase_tmpfs_mnt"); mnt.mkdir(exist_ok=True)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
try:
    db = Path("/tmp/erase_tmpfs_db"); db.mkdir(exist_ok=True)
    url = f"sqlite:///{db}/memory_{os.getpid()}.db"
    m = make_memory(mnt, url)
    fact = m.update(GLOBEX, thread_id="t1").added[0]
    for i in range(20):
        m.daily.append(f"Entry {i}: I work at Globex as a data engineer. " + "filler words " * 200)
    m.write_core("# Memory\n\n- User works at Globex as a data engineer\n")
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError as exc:
        print("disk full:", exc.errno == errno.ENOSPC)
    os.close(fd)
    try:
        m.facts.erase(fact.id)
        print("erase: no error")
    except OSError as exc:
        print("erase raised:", exc)
    m.close(flush=False)
    filler.unlink()
    m = make_memory(mnt, url)
    print("first read after reopen holds it:", "data engineer" in (m.read_core() or ""))
    left = [str(p) for p in mnt.rglob("*") if p.is_file() and b"data engineer" in p.read_bytes()]
    print("after reopen, files holding it:", left, "fact:", m.facts.get(fact.id).content)
    print("journal left:", m.facts.eraser.tombstones.pending())
    m.close(flush=False)
finally:
    subprocess.run(["umount", str(mnt)])
