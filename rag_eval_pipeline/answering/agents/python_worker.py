"""A worker process that calls the team's Python agent: ``python -m
rag_eval_pipeline.answering.agents.python_worker TARGET FD`` reads one JSON request per line on
stdin, ``{"qid": ..., "question": ...}`` (in a conversation also ``message``, ``messages`` and
``session``; ``passages`` for a probe of a target that takes them; each passed on to the target
where it takes it), and writes one JSON reply per line to file descriptor FD: ``{"document":
...}`` or ``{"error": "..."}``, after one ``{"ready": true}`` line once the target is imported
(an import's time is not a call's), or one ``{"ready": false, "error": ...}`` line when it
cannot be: no call could succeed, and the run stops before its first case. What the agent
prints goes to stderr. A process of its own, so a call that never returns can be ended at its
deadline by ending the process, which a thread cannot be."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys


def serve(target: str, reply_fd: int) -> None:
    from rag_eval_pipeline.answering.agents.mapping import as_document
    from rag_eval_pipeline.answering.agents.python_target import load_target

    replies = os.fdopen(reply_fd, "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr  # the agent's prints (an import's too) must not mix with the replies
    try:
        function = load_target(target)
    except Exception as err:  # said once, as the worker's whole answer: no call can succeed
        replies.write(json.dumps({"ready": False, "error": str(err)}) + "\n")
        return
    parameters = inspect.signature(function).parameters
    takes = {name for name in ("qid", "messages", "session", "passages") if name in parameters}
    loop = asyncio.new_event_loop()
    replies.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            kwargs = {name: request[name] for name in takes if name in request}
            returned = function(request.get("message", request["question"]), **kwargs)
            if inspect.isawaitable(returned):
                returned = loop.run_until_complete(returned)
            reply = {"document": as_document(returned)}
        except Exception as err:  # the agent's own error: one case fails, the worker goes on
            reply = {"error": f"{type(err).__name__}: {err}"}
        replies.write(json.dumps(reply, ensure_ascii=False, default=str) + "\n")


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
