"""A real llama.cpp server in this process for a local GGUF model (the ``xllamacpp`` wheel: a
prebuilt CPU build), listening on 127.0.0.1 at a free port for as long as a run needs it. The
run talks to it through the OpenAI-compatible client like to any other server."""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class LocalServerUnavailableError(RuntimeError):
    pass


@dataclass(frozen=True)
class LocalServerSettings:
    """``n_parallel`` slots decode side by side (each gets ``n_ctx / n_parallel`` tokens of
    context); ``threads`` None: the cores free when the server starts (``free_cores``);
    ``mmproj``: the multimodal projector llama.cpp loads beside a vision model."""

    n_ctx: int = 8192
    n_parallel: int = 2
    threads: int | None = None
    mmproj: Path | None = None  # a vision model's projector: the server then takes image_url parts


def free_cores(usable: int, busy: float) -> int:
    """The threads for a server that was given none: the ``usable`` cores less the ones other
    work keeps ``busy``, at least one. The server's threads wait on each other at every layer,
    so one descheduled thread stalls the rest: on two cores with one busy, two threads judged
    2.3x slower than on a quiet machine and one thread 1.0x (benchmarks/local_llm_contention.py)."""
    return max(1, min(usable, usable - round(busy)))


def busy_cores(window_s: float = 0.5) -> float:
    """How many cores other work keeps busy now: measured over ``window_s`` from /proc/stat
    where there is one (a job started a moment ago counts), else the 1-minute load average."""
    stat = Path("/proc/stat")
    if not stat.exists():
        return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0

    def jiffies() -> tuple[int, int]:
        values = [int(v) for v in stat.read_text().split("\n", 1)[0].split()[1:9]]
        idle = values[3] + values[4]  # idle and iowait
        return sum(values) - idle, sum(values)

    busy_before, total_before = jiffies()
    time.sleep(window_s)
    busy_after, total_after = jiffies()
    share = (busy_after - busy_before) / max(1, total_after - total_before)
    return share * (os.cpu_count() or 1)


def _server_threads(settings: LocalServerSettings) -> int:
    if settings.threads:
        return settings.threads
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return free_cores(usable, busy_cores())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_params(params: Any, model_file: Path, settings: LocalServerSettings, threads: int) -> Any:
    """llama.cpp's ``CommonParams`` for the model: its file, the projector of a vision model
    (llama-server's ``--mmproj``: image_url parts of a chat request are then decoded by it),
    context, slots and threads."""
    params.model.path = str(model_file)
    if settings.mmproj is not None:
        params.mmproj.path = str(settings.mmproj)
    params.n_ctx = settings.n_ctx
    params.n_parallel = settings.n_parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1  # llama.cpp logs every slot's timings to stderr otherwise
    params.endpoint_metrics = True  # a task through the server's queue, for _wait_for_its_loop
    return params


class LlamaCppServer:
    """One started server: its base URL for OpenAI-compatible clients; ``stop`` ends it."""

    def __init__(self, model_file: Path, settings: LocalServerSettings) -> None:
        try:
            import xllamacpp
        except ImportError as err:
            raise LocalServerUnavailableError(
                "a local model needs llama.cpp: pip install 'rag-eval-pipeline[local]'"
            ) from err
        threads = _server_threads(settings)
        params = server_params(xllamacpp.CommonParams(), model_file, settings, threads)
        params.port = _free_port()
        self.model_file = model_file
        self.settings = settings
        self.threads = threads
        self._server: Any = xllamacpp.Server(params)
        self._wait_for_its_loop()
        self.base_url = f"{self._server.listening_address.rstrip('/')}/v1"

    def _wait_for_its_loop(self) -> None:
        """Return once the server's task loop runs. The server starts that loop on a thread of its
        own, and the loop marks itself running when it begins: a server stopped before then never
        stops, and its destructor waits for it holding the GIL, which froze a whole test process
        on a busy machine. Metrics are answered only by the loop."""
        self._server.handle_metrics()

    def stop(self) -> None:
        self._server = None  # the server's destructor ends its loop and frees the model


class LocalServers:
    """The local servers of one resource, started on first use and reused by every step of the
    run (one per model file and settings); ``stop_all`` when the run ends."""

    def __init__(self) -> None:
        self._servers: dict[tuple[Path, LocalServerSettings], LlamaCppServer] = {}
        self._lock = threading.Lock()

    def base_url(self, model_file: Path, settings: LocalServerSettings) -> str:
        key = (model_file.resolve(), settings)
        with self._lock:
            if key not in self._servers:
                self._servers[key] = LlamaCppServer(model_file, settings)
            return self._servers[key].base_url

    def stop_all(self) -> None:
        with self._lock:
            for server in self._servers.values():
                server.stop()
            self._servers.clear()
