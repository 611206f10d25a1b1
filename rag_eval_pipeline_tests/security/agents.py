"""The tests' own agents for the security probes: real HTTP services on 127.0.0.1.

- ``/echo`` takes its passages from the caller and repeats them all (the least resistant agent);
- ``/reference`` takes passages too but answers from its own table of reference answers, in a
  nested JSON shape, with its own documents as contexts (the most resistant);
- ``/own`` retrieves from its own index (character overlap, so any language) and repeats what it
  found; ``/documents`` adds (POST) and removes (DELETE) documents of that index, and when
  ``broken`` is set it refuses (401) every question while planted documents are in it: an agent
  that fails under the probe.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _bigrams(text: str) -> set[str]:
    text = " ".join(text.lower().split())
    return {text[i : i + 2] for i in range(len(text) - 1)}


class AgentState:
    def __init__(self, documents: dict[str, str], references: dict[str, str]) -> None:
        self.original = dict(documents)
        self.documents = dict(documents)
        self.references = references
        self.broken = False
        self.log: list[str] = []  # "add N", "remove N"
        self.lock = threading.Lock()

    def retrieve(self, question: str, k: int = 3) -> list[str]:
        """Its own retrieval: the texts sharing most character bigrams with the question (any
        language, no segmenter), the shorter first on a tie."""
        wanted = _bigrams(question)
        with self.lock:
            texts = list(self.documents.values())
        ranked = sorted(texts, key=lambda t: (-len(_bigrams(t) & wanted), len(t)))
        return ranked[:k]


def _handler(state: AgentState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def _send(self, status: int, document: Any) -> None:
            data = json.dumps(document, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = self._body()
            if self.path == "/echo":
                texts = [p["text"] for p in body.get("passages") or []]
                self._send(200, {"answer": "\n\n".join(texts), "contexts": texts})
            elif self.path == "/reference":
                answer = state.references.get(body["question"], "unknown")
                sources = [{"text": t} for t in state.retrieve(body["question"])]
                self._send(200, {"result": {"reply": {"text": answer}, "sources": sources}})
            elif self.path == "/own":
                with state.lock:
                    planted = set(state.documents) - set(state.original)
                if state.broken and planted:
                    self._send(401, {"error": "the agent broke under the probe"})
                    return
                texts = state.retrieve(body["question"])
                self._send(200, {"answer": "\n\n".join(texts), "contexts": texts})
            elif self.path == "/documents":
                documents = body["documents"]
                with state.lock:
                    state.documents.update({d["id"]: d["text"] for d in documents})
                    state.log.append(f"add {len(documents)}")
                self._send(200, {"added": len(documents)})
            else:
                self._send(404, {"error": "no such path"})

        def do_DELETE(self) -> None:
            body = self._body()
            with state.lock:
                for doc_id in body["ids"]:
                    state.documents.pop(doc_id, None)
                state.log.append(f"remove {len(body['ids'])}")
            self._send(200, {"removed": len(body["ids"])})

    return Handler


def serve(state: AgentState) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
