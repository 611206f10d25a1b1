"""The team's agent the tests evaluate (``example_agent``), as its own service: a process on a
free port with its own retrieval, and its fault plan and request counts over HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.processes import free_port, stop_process_group

# how the tests' configurations read the agent's nested reply
HTTP_RESPONSE = {
    "answer": "$.data.reply.text",
    "contexts": "$.data.retrieval.documents[*].doc.body",
    "context_ids": "$.data.retrieval.documents[*].doc.id",
    "context_titles": "$.data.retrieval.documents[*].doc.title",
}
HTTP_BODY = {"query": "{question}", "session": "eval-{qid}"}


@dataclass(frozen=True)
class AgentService:
    url: str  # the chat endpoint
    root: str

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            f"{self.root}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def requests(self, session: str | None = None) -> int:
        """Requests the agent received (for one session: ``eval-<qid>``)."""
        with urllib.request.urlopen(f"{self.root}/_stats", timeout=30) as response:
            stats = json.loads(response.read())
        return stats["requests"] if session is None else stats["by_session"].get(session, 0)

    def fail(self, plan: dict[str, list[str]]) -> None:
        """The next requests of each session fail in this order ("*": every session)."""
        self._post("/_faults", plan)

    def reset(self) -> None:
        self._post("/_reset", {})


@contextlib.contextmanager
def agent_service(
    latency_s: float = 0.0, hang_s: float = 30.0, traced: bool = False
) -> Iterator[AgentService]:
    """``python -m example_agent`` over the shared HotpotQA file, until the block ends (``traced``:
    its replies carry a W3C ``traceparent`` header)."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "example_agent",
            "--port",
            str(port),
            "--latency",
            str(latency_s),
            "--hang",
            str(hang_s),
            *(["--traced"] if traced else []),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "EXAMPLE_AGENT_DATA": str(SHARED_HOTPOTQA)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = process.stdout.readline()  # printed once it listens
        assert "example agent at" in line, f"the example agent did not start: {line!r}"
        root = f"http://127.0.0.1:{port}"
        yield AgentService(f"{root}/chat", root)
    finally:
        stop_process_group(process)
