"""Nothing lost under pressure, through the real `rag-eval` process: two runs at once, servers
that trickle or never end, answers of megabytes, damaged state files, odd names and input, a
model changed under an old name, stops by signal."""

import json
import os
import signal
import subprocess
import threading
import time

import dagster as dg
import pandas as pd
import pytest

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline_tests.support import SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.cli import RAG_EVAL, in_process, rag_eval
from stand_ins.anthropic_api import FakeAnthropic, Reply, SimulatedModel, text_reply
from stand_ins.openai_api import FakeOpenAI, completion


def _table_rows(output: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip("|").split(" | ")]
        for line in output.splitlines()
        if line.startswith("| ")
    ]


def _at_once(*runs: tuple[str, ...], env: dict) -> list[subprocess.CompletedProcess]:
    """Several `rag-eval` commands started together, each in its own process."""
    results: list = [None] * len(runs)

    def run(i: int) -> None:
        results[i] = rag_eval(*runs[i], env=env)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(runs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.slow  # four processes
def test_two_runs_at_once_each_evaluate_their_own_questions_and_pay_once(tmp_path):
    """Two `rag-eval run` on one instance, started together with different samples: each prints
    its own questions (its evaluation is pinned to the knowledge base its own rebuild
    published). Two runs of the same model on the same questions: one waits for the other and
    answers from the cache it filled, so every call is paid once."""
    with FakeAnthropic(latency_s=0.2) as server:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        common = [
            "--dagster-home",
            str(tmp_path / "home"),
            "run",
            "--dataset",
            str(SHARED_HOTPOTQA),
            "--models",
        ]
        ten, fourteen = _at_once(
            (*common, "haiku", "--sample", "10"), (*common, "haiku", "--sample", "14"), env=env
        )
        for sample, result in (("10", ten), ("14", fourteen)):
            assert result.returncode == 0, result.stderr
            rows = [r for r in _table_rows(result.stdout) if r[0] == "haiku"]
            assert rows and rows[0][2] == sample, result.stdout  # n_cases: its own questions
        server.reset_counts()
        same = (*common, "haiku@bm25-k2", "--sample", "12")
        first, second = _at_once(same, same, env=env)
        asked = [r["messages"][0]["content"] for r in server.requests]
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert len(asked) == len(set(asked)) == 12  # 12 answers, not 24: the second run waited


def _claude_run(tmp_path, server, config: str, models: str = "haiku", sample: str = "3"):
    (tmp_path / "rag_eval.yaml").write_text(config)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    return rag_eval(
        "--config",
        str(tmp_path / "rag_eval.yaml"),
        "--dagster-home",
        str(tmp_path / "home"),
        "run",
        "--dataset",
        str(SHARED_HOTPOTQA),
        "--sample",
        sample,
        "--models",
        models,
        env=env,
    )


@pytest.mark.slow  # a server trickling bytes
@pytest.mark.parametrize("endless", [False, True], ids=["one-byte-at-a-time", "endless-body"])
def test_a_server_that_never_finishes_fails_the_case_at_the_deadline(tmp_path, endless):
    """Headers, then a byte every 0.3 s (each restarts the SDK's timeout), or a chunked body that
    never ends: the call's overall deadline (timeout_s x attempts) fails the case with that
    reason; the run ends instead of hanging. (The trickled body would complete after about 60 s:
    without the deadline the cases would succeed, and this test fail.)"""
    with FakeAnthropic() as server:
        answer = text_reply({"model": "claude-haiku-4-5"}, "Chief of Protocol")
        slow = Reply(200, answer.body, trickle_s=0.3, endless=endless)
        server.queue(slow, slow)
        result = _claude_run(tmp_path, server, "anthropic: {timeout_s: 2, max_retries: 0}\n", sample="2")
    assert result.returncode == 1
    assert "no complete response within 2 s" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # a server trickling bytes
def test_an_openai_compatible_server_that_never_finishes_fails_at_the_deadline(tmp_path):
    with FakeOpenAI() as server:
        body = completion("gpt-4o-mini", "Chief of Protocol").body
        server.queue(*[Reply(200, body, trickle_s=0.3, endless=True)] * 2)
        (tmp_path / "rag_eval.yaml").write_text(
            f"openai: {{base_url: '{server.url}', timeout_s: 2, max_retries: 0}}\n"
        )
        result = rag_eval(
            "--config",
            str(tmp_path / "rag_eval.yaml"),
            "--dagster-home",
            str(tmp_path / "home"),
            "run",
            "--dataset",
            str(SHARED_HOTPOTQA),
            "--sample",
            "2",
            "--models",
            "openai:gpt-4o-mini",
        )
    assert result.returncode == 1 and "no complete response within 2 s" in result.stderr


@pytest.mark.slow  # 10 MB answers through a process
def test_an_answer_of_megabytes_is_stored_cut_and_bounds_the_report(tmp_path):
    huge = "Chief of Protocol " + "and so on " * 1_000_000  # 10 MB

    class Verbose(SimulatedModel):
        def __call__(self, request):
            if "tool_choice" in request:
                return super().__call__(request)
            return text_reply(request, huge)

    with FakeAnthropic(responder=Verbose()) as server:
        result = _claude_run(tmp_path, server, "max_answer_chars: 20000\n")
    assert result.returncode == 0, result.stderr
    artifacts = tmp_path / "home" / "storage" / "artifacts"
    answers = pd.read_parquet(artifacts / "candidate_answers" / "haiku.parquet")
    assert (answers["answer_length"] > 20_000).all()  # (the client keeps at most 100,000 of the 10 MB)
    assert (
        answers["answer"].str.len().max() < 20_100 and answers["answer"].str.contains(r"\[\.\.\.cut: ").all()
    )
    assert (artifacts / "eval_report.html").stat().st_size < 6_000_000  # plotly.js is most of it
    cache = sum(f.stat().st_size for f in (tmp_path / "home" / "storage" / "llm_cache").rglob("*.json"))
    assert cache < 1_000_000


@pytest.mark.slow  # a run per damaged file
def test_damaged_state_files_are_one_line_with_the_way_out(tmp_path, capsys):
    home = tmp_path / "home"
    assert (
        in_process(capsys, "--dagster-home", str(home), "run", "--sample", "5", "--models", "oracle")[0] == 0
    )
    pointer = home / "storage" / "artifacts" / "knowledge_base" / "LIVE.json"
    pointer.write_text('{"live":\n')
    code, _, err = in_process(
        capsys, "--dagster-home", str(home), "gate", "--model", "oracle", "--min", "f1=0.5"
    )
    assert code == 2 and len(err.splitlines()) == 1 and str(pointer) in err and "`rag-eval run`" in err
    code, out, err = in_process(
        capsys, "--dagster-home", str(home), "run", "--sample", "5", "--models", "oracle"
    )
    assert code == 0, err  # run rebuilds the live pointer
    assert json.loads(pointer.read_text())["live"]["kb_index"]
    scores = home / "storage" / "artifacts" / "judge_scores" / "oracle.parquet"
    scores.write_bytes(scores.read_bytes()[:100])  # truncated
    code, _, err = in_process(capsys, "--dagster-home", str(home), "worst", "--model", "oracle")
    assert code == 2 and str(scores) in err and "delete it and evaluate oracle again" in err
    (home / "dagster.yaml").write_text("run_monitoring: [unclosed\n")
    result = rag_eval("--dagster-home", str(home), "models", "list")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.startswith(f"error: {home / 'dagster.yaml'} is unreadable")
        and "delete it" in result.stderr
    )


def test_names_and_input_that_would_slip_through_are_refused_in_one_line(tmp_path, capsys):
    cases = {
        "answer_models: [{name: '.', provider: offline, model: oracle}]\n": "answer_models.0.name",
        'custom_metrics: [{name: "a\\0b", kind: python, callable: m:f}]\n': "custom metric name",
        "custom_metrics: [{name: '<script>', kind: python, callable: m:f}]\n": "custom metric name",
        "custom_metrics: [{name: reference, kind: python, callable: m:f}]\n": "a built-in reference judge",
        "thresholds: " + "[" * 2000 + "\n": "nested too deeply",
        "thresholds: {'a/b/c': 0.5}\n": (
            "expected [tag:|type:|level:|language:|agent_version:GROUP/][JUDGE/]METRIC"
        ),
    }
    for text, said in cases.items():
        config = tmp_path / "rag_eval.yaml"
        config.write_text(text)
        code, _, err = in_process(capsys, "--config", str(config), "models", "list")
        assert code == 2 and len(err.splitlines()) == 1 and said in err, (text[:40], err)
    code, _, err = in_process(capsys, "--dagster-home", str(tmp_path / "h"), "models", "add", "...")
    assert code == 2 and "start with a letter or digit" in err
    binary = tmp_path / "questions.jsonl"
    binary.write_bytes(b'\n\xff\xfe\x00binary\n{"id": "a"}\n')  # (read line by line: the first bad line)
    code, _, err = in_process(capsys, "--dagster-home", str(tmp_path / "h"), "run", "--dataset", str(binary))
    assert code == 2 and err == (
        f"error: {binary}, line 2: not UTF-8 text (its encoding could not be told; is it a binary "
        "file?): re-save it as UTF-8\n"
    )


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_every_question_with_sample_size_zero_and_documents_in_subfolders(tmp_path, capsys):
    five = tmp_path / "five.jsonl"
    five.write_text("".join(SHARED_HOTPOTQA.read_text().splitlines(keepends=True)[:5]))
    (tmp_path / "docs" / "policies").mkdir(parents=True)
    (tmp_path / "docs" / "policies" / "handbook.md").write_text("Our office is in Lyon.")
    config = tmp_path / "rag_eval.yaml"
    config.write_text(f"dataset: {{source: '{five}', sample_size: 0, documents: docs}}\n")
    code, out, err = in_process(capsys, "--config", str(config), "--dagster-home", str(tmp_path / "h"), "run")
    assert code == 0, err
    assert "| oracle | reference | 5 | 0 |" in out  # 0 is every question, as documented
    passages = pd.read_parquet(next((tmp_path / "h" / "storage").rglob("user_documents.parquet")))
    assert passages["source_file"].tolist() == ["policies/handbook.md"]


def test_a_model_changed_under_an_old_name_makes_its_results_stale(tmp_path, capsys):
    config = tmp_path / "rag_eval.yaml"
    config.write_text("answer_models: [{name: mine, provider: offline, model: oracle}]\n")
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "h")]
    assert in_process(capsys, *home, "run", "--sample", "10")[0] == 0
    assert in_process(capsys, *home, "gate", "--model", "mine", "--min", "f1=0.5")[0] == 0
    config.write_text(
        "answer_models: [{name: mine, provider: offline, model: 'null', retrieval_mode: bm25, top_k: 2}]\n"
    )
    code, out, _ = in_process(capsys, *home, "gate", "--model", "mine", "--min", "f1=0.5")
    assert code == 1 and "stale: computed by answer model" in out and "FAILED: stale results" in out


def test_a_pipe_or_a_line_break_in_a_question_never_shifts_the_columns(tmp_path, capsys):
    frame = pd.DataFrame({"model": ["a|b"], "question": ["What is\na | b?"], "mean": [0.5]})
    lines = to_markdown(frame).splitlines()
    assert len(lines) == 3 and lines[0].count(" | ") == lines[2].count(" | ") == 2
    assert "a\\|b" in lines[2] and "What is a \\| b?" in lines[2]
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "Is 1 | 2\nor not?", "answer": "x | y"}) + "\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "d.md").write_text("Nothing relevant here.")
    config = tmp_path / "rag_eval.yaml"
    config.write_text(f"dataset: {{kind: custom, questions: '{questions}', documents: docs}}\n")
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "h")]
    assert in_process(capsys, *home, "run", "--models", "oracle")[0] == 0
    code, out, _ = in_process(capsys, *home, "worst", "--model", "oracle")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert code == 0 and len(rows) == 2 and len({line.count(" | ") for line in rows}) == 1


def test_a_run_of_a_dead_process_that_never_started_is_marked_failed(tmp_path):
    """A run created by a `rag-eval` killed before the run started stays NOT_STARTED forever,
    unless the next command marks it failed, as it does runs that started."""
    import socket

    from rag_eval_pipeline.defs.names import CLI_HOST_TAG, CLI_PID_TAG

    home = tmp_path / "home"
    instance = open_instance(str(home))
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process that existed and is gone
    stuck = dg.DagsterRun(
        job_name="evaluation_job",
        run_id="00000000-0000-0000-0000-000000000001",
        status=dg.DagsterRunStatus.NOT_STARTED,
        tags={CLI_PID_TAG: str(gone.pid), CLI_HOST_TAG: socket.gethostname()},
    )
    instance.add_run(stuck)
    instance.dispose()
    open_instance(str(home)).dispose()  # what every command does first
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_run_by_id(stuck.run_id).status == dg.DagsterRunStatus.FAILURE


@pytest.mark.slow  # a process stopped by a signal
def test_sigterm_is_one_line_and_a_failed_run(tmp_path):
    home = tmp_path / "home"
    with FakeAnthropic(latency_s=1.0) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        env.pop("DAGSTER_HOME", None)
        process = subprocess.Popen(
            [
                RAG_EVAL,
                "--dagster-home",
                str(home),
                "run",
                "--sample",
                "20",
                "--models",
                "haiku",
                "--concurrency",
                "1",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while len(server.requests) < 2:  # the evaluation run is calling the model
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)  # polling the stand-in's request log
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 143
    assert "Traceback" not in err and [line for line in err.splitlines() if line.startswith("error:")] == [
        line for line in err.splitlines() if line.strip()
    ]
    assert err.startswith("error: terminated")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs(dg.RunsFilter(tags={"dagster/partition": "haiku"}))
        assert [r.status for r in runs] == [dg.DagsterRunStatus.FAILURE]
