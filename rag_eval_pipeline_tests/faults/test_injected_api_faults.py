"""Transient API faults through the whole pipeline: 30% of the calls fail once with 429 (with
retry-after), 529 or 500, and not one case is lost."""

import hashlib

import pytest

from rag_eval_pipeline import cli
from stand_ins.anthropic_api import FakeAnthropic, SimulatedModel, error_reply

FAULTS = [("rate_limit_error", 429), ("overloaded_error", 529), ("api_error", 500)]


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_thirty_percent_transient_faults_lose_no_case(tmp_path, monkeypatch, capsys):
    healthy = SimulatedModel()
    seen: set[str] = set()

    def flaky(request):
        """The first attempt of 30% of the distinct calls fails (chosen by content: seeded)."""
        digest = hashlib.sha256(repr(request.get("messages")).encode()).digest()
        if digest[0] < 77 and digest not in seen:  # 77 / 256 = 30%
            seen.add(digest)
            kind, status = FAULTS[digest[1] % 3]
            return error_reply(status, kind, retry_after=0 if status == 429 else None)
        return healthy(request)

    home = ["--dagster-home", str(tmp_path / "home")]
    with FakeAnthropic(responder=flaky) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        arguments = ["run", "--sample", "35", "--models", "haiku", "--judges", "reference,sonnet"]
        code = cli.main([*home, *arguments])
        replies = list(server.replies)
    out = capsys.readouterr().out
    assert code == 0
    assert "| haiku | sonnet | 35 | 0 |" in out and "| haiku | reference | 35 | 0 |" in out
    failures = sum(status != 200 for status in replies)
    assert failures == len(seen) and 0.2 < failures / len(replies) < 0.4
    assert {429, 529, 500} <= set(replies)
