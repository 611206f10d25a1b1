"""The tests' own agent that answers the way real ones do: in sentences, from a set of labelled
answers (``SENTENCE_AGENT_FORMS``: a JSON file of question -> the answer to give), with its own
retrieval (the example agent's TF-IDF over the shared sample). Served over HTTP in a nested
shape of its own (``serve``), and as Python callables that return each documented subset of a
reply: the answer alone; with contexts; with titles; with ids. One callable never returns for a
question whose answer is ``HANG``."""

from __future__ import annotations

import json
import os
import threading
import time
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from example_agent import answer as retrieve_and_answer
from example_agent.agent import default_agent
from rag_eval_pipeline.data.knowledge_base import passage_id

HANG = "HANG"

if "EXAMPLE_AGENT_DATA" in os.environ:  # in an agent's process: its index is built as it loads
    default_agent()


@lru_cache(maxsize=1)
def _forms() -> dict[str, str]:
    return json.loads(open(os.environ["SENTENCE_AGENT_FORMS"], encoding="utf-8").read())


def _reply(question: str) -> dict:
    found = retrieve_and_answer(question)  # its own retrieval: the contexts it answers from
    return {**found, "answer": _forms().get(question, found["answer"])}


def answer_only(question: str) -> dict:
    return {"answer": _reply(question)["answer"]}


def with_contexts(question: str) -> dict:
    reply = _reply(question)
    return {"answer": reply["answer"], "contexts": reply["contexts"]}


def with_titles(question: str) -> dict:
    reply = _reply(question)
    return {
        "answer": reply["answer"],
        "contexts": reply["contexts"],
        "context_titles": reply["context_titles"],
    }


def with_ids(question: str) -> dict:
    """Ids as the knowledge base names its passages: an agent that serves from the same index."""
    reply = _reply(question)
    ids = [passage_id(title) for title in reply["context_titles"]]
    return {"answer": reply["answer"], "contexts": reply["contexts"], "context_ids": ids}


def hangs(question: str) -> dict:
    reply = _reply(question)
    if reply["answer"] == HANG:
        while True:  # a callable that never returns: only its process's end stops it
            time.sleep(60)
    return {
        "answer": reply["answer"],
        "contexts": reply["contexts"],
        "context_titles": reply["context_titles"],
    }


def serve(port: int) -> ThreadingHTTPServer:
    """POST / {"input": {"text": question}} -> {"output": {"message": {"content": ...}},
    "trace": {"retrieval": {"hits": [{"page": {"name": title, "text": text}}]}}}; on a thread."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            reply = _reply(body["input"]["text"])
            hits = [
                {"page": {"name": t, "text": c}} for t, c in zip(reply["context_titles"], reply["contexts"])
            ]
            data = json.dumps(
                {"output": {"message": {"content": reply["answer"]}}, "trace": {"retrieval": {"hits": hits}}}
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data.encode())))
            self.end_headers()
            self.wfile.write(data.encode())

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
