"""Nothing leaked, nothing lost: a secret header never reaches a file or a stream, an oversized
reply stays out of the cache, a killed production run's spend is counted by the next, damaged
state files are named with a recovery that works, and an early stop says so."""

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from rag_eval_pipeline.common.secrets import Redactor
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.reporting.markdown import markdown_text
from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.cli import RAG_EVAL, in_process, rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.production import log_row, production_config, shared_questions, write_day

SECRET = "Bearer s3cr3t-XYZ-0123456789"


def _echoing_server(port: int) -> ThreadingHTTPServer:
    """An agent that fails every call with a 500 whose body echoes the request's headers."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps({"error": "boom", "you_sent": dict(self.headers)}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.slow
def test_a_secret_header_is_in_no_file_and_no_stream(tmp_path):
    port = free_port()
    server = _echoing_server(port)
    bot = {
        "name": "bot",
        "provider": "http",
        "url": f"http://127.0.0.1:{port}/chat",
        "headers_env": {"Authorization": "BOT_TOKEN"},
        "max_retries": 0,
        "version": "v1",
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump(
            {"dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": 4}, "answer_models": [bot]}
        )
    )
    env = {"BOT_TOKEN": SECRET}
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    try:
        streams = [rag_eval(*args, "run", "--models", "bot,oracle", cwd=tmp_path, env=env)]
        streams.append(rag_eval(*args, "agents", "check", "bot", cwd=tmp_path, env=env))
        qid = json.loads(SHARED_HOTPOTQA.read_text().splitlines()[0])["id"]
        streams.append(rag_eval(*args, "explain", qid, "--model", "oracle", cwd=tmp_path, env=env))
    finally:
        server.shutdown()
    run, check, _ = streams
    assert run.returncode == 1 and "bot failed" in run.stderr  # every call failed: the partition failed
    assert check.returncode == 1 and "***" in check.stdout  # the echoed header is shown masked
    token = SECRET.split(" ", 1)[1]
    for result in streams:
        assert token not in result.stdout + result.stderr
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert leaked == [], leaked  # the instance (run and event databases), artifacts, cache, history


@pytest.mark.slow
def test_an_oversized_reply_never_enters_the_agent_cache(tmp_path):
    config = tmp_path / "rag_eval.yaml"
    big = {
        "name": "big",
        "provider": "python",
        "target": "rag_eval_pipeline_tests.faults.big_agent:answer",
        "version": "v1",
    }
    config.write_text(
        yaml.safe_dump(
            {"dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": 3}, "answer_models": [big]}
        )
    )
    result = rag_eval(
        "--config",
        str(config),
        "--dagster-home",
        str(tmp_path / "home"),
        "run",
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr
    cache = tmp_path / "home" / "storage" / "llm_cache" / "agent_cache"
    sizes = [p.stat().st_size for p in cache.rglob("*.json")] if cache.exists() else []
    assert all(size <= 100_000 for size in sizes), sizes
    answers = next((tmp_path / "home").rglob("candidate_answers/big.parquet"))
    import pandas as pd

    stored = pd.read_parquet(answers)
    assert (stored["answer_length"] > 1_000_000).all() and stored["answer"].str.len().max() < 21_000


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_damaged_history_files_are_named_and_their_recovery_works(tmp_path, capsys):
    home = tmp_path / "home"
    args = ["--dagster-home", str(home)]
    assert in_process(capsys, *args, "run", "--sample", "5", "--models", "oracle")[0] == 0
    runs = home / "history" / "runs.db"
    backup = runs.with_name("runs.db.backup")
    assert backup.is_file()  # a copy of the history, taken as the command opened the home
    good = runs.read_bytes()
    runs.write_bytes(good[: len(good) // 2])  # half a database
    code, _, err = in_process(capsys, *args, "models", "list")
    assert code == 2 and len(err.splitlines()) == 1 and f"error: {runs} is damaged" in err, err
    assert "dagster.yaml" not in err and f"cp {backup} {runs}" in err
    (home / "dagster.yaml").unlink()  # what the old message advised: the same file is still named
    code, _, err = in_process(capsys, *args, "models", "list")
    assert code == 2 and f"{runs} is damaged" in err
    runs.write_bytes(b"")  # empty: Dagster would make a new, empty history without a word
    code, _, err = in_process(capsys, *args, "models", "list")
    assert code == 2 and f"{runs} is empty (0 bytes)" in err
    runs.write_bytes(backup.read_bytes())  # the recovery the message gives
    code, out, err = in_process(capsys, *args, "models", "list")
    assert code == 0 and out.split() == ["oracle"], err
    history = home / "storage" / "history" / "metric_history.parquet"
    assert in_process(capsys, *args, "run", "--sample", "5", "--models", "oracle")[0] == 0
    previous = history.with_name("metric_history.parquet.previous")
    assert previous.is_file()
    history.write_bytes(history.read_bytes()[:50])
    code, out, err = in_process(capsys, *args, "run", "--sample", "5", "--models", "oracle")
    assert code == 2 and f"{history} is unreadable" in err and f"cp {previous} {history}" in err
    history.write_bytes(previous.read_bytes())
    assert in_process(capsys, *args, "run", "--sample", "5", "--models", "oracle")[0] == 0
    pointer = home / "storage" / "artifacts" / "knowledge_base" / "LIVE.json"
    pointer.write_text("{broken")
    code, out, err = in_process(capsys, *args, "run", "--sample", "5", "--models", "oracle")
    assert code == 0 and f"warning: the live knowledge-base pointer {pointer} is unreadable" in out
    assert "this run's rebuild writes it anew" in out


def _wait_until_it_catches(process: subprocess.Popen, number: int) -> None:
    """Until the process has a handler for the signal (its SigCgt mask in /proc), or has ended."""
    status = Path(f"/proc/{process.pid}/status")
    while process.poll() is None:
        caught = next(line for line in status.read_text().splitlines() if line.startswith("SigCgt:"))
        if int(caught.split()[1], 16) & (1 << (number - 1)):
            return
        time.sleep(0.01)


def test_a_stop_while_starting_says_so_in_one_line(tmp_path):
    process = subprocess.Popen(
        [RAG_EVAL, "--dagster-home", str(tmp_path / "home"), "run", "--sample", "5"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_it_catches(process, signal.SIGTERM)  # its handler is set; it is still importing
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143
    assert err.strip().splitlines()[-1].startswith("error: terminated"), err
    assert "Traceback" not in err


def test_an_answer_cannot_write_markdown_into_a_case_page():
    answer = "# Heading\n[click](http://evil.example) **bold** | pipe <script>x</script>"
    shown = markdown_text(answer)
    assert "\n" not in shown and "\\#" in shown and "\\[click\\]" in shown and "\\<script\\>" in shown
    cut = markdown_text(answer, 20)
    assert cut.endswith(f"\\[...{len(answer):,} characters\\]")  # cut, its length said


@pytest.mark.slow
def test_a_killed_production_run_spends_within_the_day_budget_with_its_re_run(tmp_path):
    """The STRICT judge on 12 interactions within a budget that allows about 8 calls: a clean
    day makes N calls; a day whose run is killed with -9 after a few calls, then run again,
    makes at most N + 1 in all (the one in flight when it was killed is the only one not
    counted), since each call's cost is written down as it returns, not at the run's end."""
    from stand_ins.anthropic_api import FakeAnthropic

    day = "2026-11-27"
    questions = shared_questions(12)

    def project(folder: Path) -> list[str]:
        write_day(folder / "logs", day, [log_row(q, day, n, True) for n, q in enumerate(questions)])
        config = folder / "rag_eval.yaml"
        production = production_config(folder / "logs", sample_per_day=12, judges=["claude-sonnet-4-6"])
        production |= {"daily_budget_usd": 0.03, "thresholds": {"faithfulness": 0.0}}
        config.write_text(yaml.safe_dump({"concurrency": 1, "production": production}))
        return [
            "--config",
            str(config),
            "--dagster-home",
            str(folder / "home"),
            "production",
            "run",
            "--day",
            day,
        ]

    with FakeAnthropic(latency_s=0.3) as claude:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": claude.url}
        clean = subprocess.run(
            [RAG_EVAL, *project(tmp_path / "clean")], env=env, capture_output=True, text=True, timeout=300
        )
        assert clean.returncode in (0, 1), clean.stderr
        allowed = len(claude.requests)
        assert 0 < allowed < 12  # the budget stops the day before every case is judged
        claude.reset_counts()
        args = project(tmp_path / "killed")
        process = subprocess.Popen(
            [RAG_EVAL, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 240
        while len(claude.requests) < allowed // 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until about half the day's calls were made
        process.kill()
        process.wait()
        first = len(claude.requests)
        again = subprocess.run([RAG_EVAL, *args], env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode in (0, 1), again.stderr
        total = len(claude.requests)
    assert 0 < first < allowed and total <= allowed + 1, (first, total, allowed)
    spend = tmp_path / "killed" / "home" / "storage" / "spend" / f"production-{day}.jsonl"
    recorded = [json.loads(line) for line in spend.read_text().splitlines()]
    assert len(recorded) >= total - 1 and sum(r["cost_usd"] for r in recorded) <= 0.03


def _waits_for_lock(process: subprocess.Popen) -> bool:
    """Until the process says it waits for the home's lock (on stderr, naming the holder): True;
    False if it ended first."""
    return any(line.startswith("waiting for ") and "opening the instance" in line for line in process.stderr)


@pytest.mark.slow  # two commands that open Dagster
def test_a_history_another_command_is_creating_is_waited_for_not_called_damaged(tmp_path):
    """While one command creates a new home's history, the file is briefly empty; a second
    command started then waits for the creation lock, and only then judges the file: it opens
    the finished history instead of calling it damaged (what failed two `rag-eval run` started
    together on a busy machine)."""
    from rag_eval_pipeline.common.files import locked
    from rag_eval_pipeline.instance.home import CREATION_LOCK

    finished = tmp_path / "finished"
    made = subprocess.run(
        [RAG_EVAL, "--dagster-home", str(finished), "models", "add", "oracle"], capture_output=True
    )
    assert made.returncode == 0, made.stderr
    home = tmp_path / "home"
    runs = home / "history" / "runs.db"
    runs.parent.mkdir(parents=True)
    with locked(home / CREATION_LOCK, "opening the instance"):  # this test: the command creating it
        runs.write_bytes(b"")  # what SQLite leaves until the schema is written
        second = subprocess.Popen(
            [RAG_EVAL, "--dagster-home", str(home), "models", "add", "baseline"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        waited = _waits_for_lock(second)
        for name in ("history", "schedules", "dagster.yaml"):  # the creation finishes
            source, target = finished / name, home / name
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True)
            elif not target.exists():
                shutil.copy(source, target)
    out, err = second.communicate(timeout=120)
    assert waited, err
    assert second.returncode == 0 and out.strip() == "added: baseline", err


@pytest.mark.slow  # the session's evaluated instance, copied
def test_a_history_the_fast_reader_cannot_read_is_asked_of_the_instance_never_called_empty(
    evaluated_copy, capsys
):
    """The reading commands read a local home's SQLite files without Dagster. A home at a schema
    revision those queries were not written for is read through the opened instance; a damaged
    table makes the fast reader stand aside too: the instance answers, or the command says in
    one line that the history cannot be read. Never "no evaluation" for "cannot read"."""
    import sqlite3
    from contextlib import closing

    from rag_eval_pipeline.instance.location import SCHEMA_REVISIONS, local_history, schema_revision

    home = evaluated_copy.home
    index = home / "history" / "runs" / "index.db"
    assert schema_revision(index) in SCHEMA_REVISIONS  # what this Dagster writes: the pin moved if not
    args = ["--dagster-home", str(home)]
    qid = load_asset(evaluated_copy.instance, "judgement_list")["qid"].iloc[0]
    commands = [
        ["worst", "--model", "oracle", "-n", "2"],
        ["gate", "--model", "oracle", "--min", "correctness=0.5"],
        ["explain", qid, "--model", "oracle"],
        ["diff", "oracle", "null"],
    ]
    answers = {}
    for command in commands:
        code, out, err = in_process(capsys, *args, *command)
        assert code in (0, 1), (command, err)  # diff may find regressions: 1
        answers[command[0]] = out

    def change(sql: str) -> None:
        with closing(sqlite3.connect(index)) as db:
            db.execute(sql)
            db.commit()

    change("UPDATE alembic_version SET version_num = 'ffffffffffff'")  # a later Dagster's schema
    assert local_history(str(home)) is None  # the fast reader stands aside
    for command in commands:
        code, out, err = in_process(capsys, *args, *command)
        assert code in (0, 1) and out == answers[command[0]], (command, err)  # the instance answers alike

    change(f"UPDATE alembic_version SET version_num = '{next(iter(SCHEMA_REVISIONS))}'")
    change("ALTER TABLE event_logs RENAME TO event_logs_damaged")
    for command in commands:
        code, out, err = in_process(capsys, *args, *command)
        said = out + err
        wrong = ("no evaluation", "not evaluated", "no scores", "Traceback")
        assert not any(w in said for w in wrong), (command, said)
        if code == 2:  # the instance cannot read it either: one line, with the way back
            assert len(err.splitlines()) == 1 and err.startswith(f"error: the run history of {home}")
            assert "cannot be read" in err and ".backup" in err
        else:
            assert out == answers[command[0]], (command, err)


def test_a_database_url_masks_its_password_and_never_its_user_name():
    """A URL's password is masked wherever it appears, alone or in the URL; a user name without
    a password is no secret: masking it would hide every "postgres" in every error line."""
    redact = Redactor.of(["postgresql://postgres:s3cret-pw@db:5432/dagster", "postgresql://nobody@db/x"])
    assert redact("connect postgresql://postgres:s3cret-pw@db:5432/dagster") == "connect ***"
    assert redact("password s3cret-pw refused for user postgres") == "password *** refused for user postgres"
    assert redact("the agent nobody is not configured") == "the agent nobody is not configured"
