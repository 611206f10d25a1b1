"""`rag-eval agents check`: one call to the agent before a run, shown as a field-mapping preview:
the request, the raw response (cut), what each JSONPath found, and what is missing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from rag_eval_pipeline.answering.agents.answers_file import AnswersFile
from rag_eval_pipeline.answering.agents.http import HttpTransport
from rag_eval_pipeline.answering.agents.mapping import MISSING, ResponseMapping, UnreadableReplyError
from rag_eval_pipeline.answering.agents.python_target import PythonTransport, load_target
from rag_eval_pipeline.answering.agents.settings import (
    AnswersFileEntry,
    HttpAgentEntry,
    PythonAgentEntry,
)

SHOWN_CHARS = 1500  # of the raw response


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]} [...cut: {len(text):,} characters]"


def _preview(mapping: ResponseMapping, document: Any) -> tuple[list[str], bool]:
    """The mapping table and whether a reply can be read from the document."""
    lines = ["", "mapping:"]
    width = max(len(field) for field, _, _ in mapping.preview(document))
    for field, path, found in mapping.preview(document):
        lines.append(f"  {field.ljust(width)}  {path}  ->  {_cut(found, 300)}")
    try:
        reply = mapping.read(document)
    except UnreadableReplyError as err:
        lines += ["", f"MISSING: {err}"]
        return lines, False
    missing = [field for field, path, found in mapping.preview(document) if found == MISSING]
    if missing:
        lines += ["", f"found nothing for: {', '.join(missing)}"]
    said = (
        "no contexts mapped: retrieval metrics will be absent"
        if reply.contexts is None
        else f"{len(reply.contexts)} contexts"
    )
    cited = (
        "cites nothing: citation metrics will be absent"
        if not reply.citations
        else f"cites {', '.join(map(str, reply.citations))}"
    )
    lines += ["", f"reply: answer {reply.answer!r}; {said}; {cited}"]
    return lines, True


async def _http(
    entry: HttpAgentEntry, headers: dict[str, str], qid: str, question: str
) -> tuple[list[str], bool]:
    transport = HttpTransport(entry, headers)
    request = transport.request(qid, question)
    shown = request.get("content") or json.dumps(request.get("params"))
    lines = [f"request: {request['method']} {entry.url}", f"  body: {_cut(str(shown), 500)}"]
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(entry.timeout_s)) as client:
            response = await asyncio.wait_for(client.request(**request), entry.timeout_s)
    except (TimeoutError, httpx.TimeoutException):
        return [*lines, "", f"FAILED: no response within {entry.timeout_s:g} s"], False
    except httpx.TransportError as err:
        return [*lines, "", f"FAILED: cannot reach {entry.url} ({type(err).__name__}: {err})"], False
    kind = response.headers.get("content-type", "no content type")
    lines += [
        "",
        f"response: HTTP {response.status_code} ({kind}), {len(response.content):,} bytes",
        _cut(response.text),
    ]
    if response.status_code >= 400:
        return [*lines, "", f"FAILED: HTTP {response.status_code}"], False
    try:
        document = response.json()
    except ValueError:
        return [*lines, "", "FAILED: the response is not JSON"], False
    more, ok = _preview(entry.response.compiled(), document)
    return lines + more, ok


async def _python(entry: PythonAgentEntry, qid: str, question: str) -> tuple[list[str], bool]:
    lines = [f"call: {entry.target}({question!r})"]
    try:
        load_target(entry.target)  # an import that fails is said as such
        transport = PythonTransport(entry.target, entry.timeout_s)
        try:
            document = await transport(qid, question)
        finally:
            await transport.aclose()
    except Exception as err:
        return [*lines, "", f"FAILED: {type(err).__name__}: {err}"], False
    lines += ["", "returned:", _cut(json.dumps(document, ensure_ascii=False, default=str, indent=2))]
    more, ok = _preview(entry.response.compiled(), document)
    return lines + more, ok


def _file(entry: AnswersFileEntry) -> tuple[list[str], bool]:
    answers = AnswersFile(entry)  # every row readable, or an AnswersFileError naming them
    lines = [f"file: {entry.path}, {len(answers.rows)} rows, columns: {', '.join(answers.columns)}"]
    unread = answers.unread_columns()
    if unread:
        lines.append(f"columns no mapping reads: {', '.join(unread)}")
    lines += ["", "first row:", _cut(json.dumps(answers.rows[0], ensure_ascii=False, default=str, indent=2))]
    more, ok = _preview(answers.mapping, answers.rows[0])
    return lines + more, ok


def check_http(entry: HttpAgentEntry, headers: dict[str, str], question: str) -> tuple[str, bool]:
    """The request, the raw response and what the mapping reads from it; whether a run could."""
    lines, ok = asyncio.run(_http(entry, headers, "check", question))
    return "\n".join(lines), ok


def check_python(entry: PythonAgentEntry, question: str) -> tuple[str, bool]:
    lines, ok = asyncio.run(_python(entry, "check", question))
    return "\n".join(lines), ok


def check_file(entry: AnswersFileEntry) -> tuple[str, bool]:
    lines, ok = _file(entry)
    return "\n".join(lines), ok
