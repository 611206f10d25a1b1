"""The Message Batches API (half price) for large runs: submit every uncached call of a stage as
one batch, poll until it ends, and put the results in the response cache. The stage then runs as
usual and finds its answers in the cache; calls that failed in the batch go through the normal
API with its retries. The batch id is written down as soon as the batch exists, so a crashed or
re-materialized run resumes polling the same batch instead of paying for a second one."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anthropic

from rag_eval_pipeline.llm.anthropic_client import _to_response
from rag_eval_pipeline.llm.cache import ResponseCache
from rag_eval_pipeline.llm.client import LLMRequest


@dataclass
class BatchReport:
    batch_id: str | None = None
    submitted: int = 0
    already_cached: int = 0
    succeeded: int = 0
    failed: int = 0
    resumed: bool = False
    errors: list[str] = field(default_factory=list)


def batch_params(request: LLMRequest) -> dict:
    """The raw Messages-API body of one batch entry (sampling parameters sit in the body)."""
    kwargs = request.api_kwargs()
    return {**{k: v for k, v in kwargs.items() if k != "extra_body"}, **kwargs.get("extra_body", {})}


@dataclass(frozen=True)
class BatchPrefetcher:
    """Fills the response cache through one Message Batch (half price), resumed by its recorded
    id after a crash."""

    client: anthropic.Anthropic
    cache: ResponseCache
    state_dir: Path
    poll_interval_s: float = 30.0
    timeout_s: float = 24 * 3600

    def prefill(
        self, requests: Sequence[LLMRequest], on_progress: Callable[[int, int], None] | None = None
    ) -> BatchReport:
        report = BatchReport()
        pending: dict[str, LLMRequest] = {}
        for request in requests:
            key = request.cache_key()
            if self.cache.get(key) is not None:
                report.already_cached += 1
            else:
                pending.setdefault(key, request)
        if not pending:
            return report
        state = (
            self.state_dir / f"{hashlib.sha256(chr(10).join(sorted(pending)).encode()).hexdigest()[:16]}.json"
        )
        if state.is_file():
            report.batch_id, report.resumed = json.loads(state.read_text())["batch_id"], True
        else:
            batch = self.client.messages.batches.create(
                requests=[{"custom_id": key, "params": batch_params(r)} for key, r in pending.items()]
            )
            report.batch_id = batch.id
            self.state_dir.mkdir(parents=True, exist_ok=True)
            state.write_text(json.dumps({"batch_id": batch.id, "requests": len(pending)}))
        report.submitted = len(pending)
        deadline = time.monotonic() + self.timeout_s
        while True:
            batch = self.client.messages.batches.retrieve(report.batch_id)
            counts = batch.request_counts
            if on_progress is not None:
                on_progress(
                    counts.succeeded + counts.errored + counts.canceled + counts.expired, len(pending)
                )
            if batch.processing_status == "ended":
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"batch {report.batch_id} still {batch.processing_status}; re-run to resume"
                )
            time.sleep(self.poll_interval_s)  # the batch runs remotely: wait between polls
        for entry in self.client.messages.batches.results(report.batch_id):
            if entry.result.type == "succeeded":
                self.cache.put(entry.custom_id, _to_response(entry.result.message, batch=True))
                report.succeeded += 1
            else:
                report.failed += 1
                if len(report.errors) < 3:
                    report.errors.append(f"{entry.custom_id[:12]}: {entry.result.type}")
        state.unlink(missing_ok=True)
        return report
