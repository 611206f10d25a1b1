"""The `rag-eval` entry point as a user runs it: exit codes, the printed table, the one-line
errors, and the configuration `rag-eval init` writes."""

import json
from pathlib import Path

import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.support.cli import in_process, rag_eval
from rag_eval_pipeline_tests.support.docs import commands, reading_order
from stand_ins.anthropic_api import FakeAnthropic


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_run_prints_the_comparison_then_models_are_managed(shared_hotpotqa, tmp_path, capsys):
    home = ["--dagster-home", str(tmp_path / "home")]
    run = rag_eval(
        *home, "run", "--dataset", str(shared_hotpotqa), "--sample", "6", "--models", "oracle,null"
    )
    assert run.returncode == 0, run.stderr
    assert "| oracle | reference | 6 | 0 |" in run.stdout and "| null | reference | 6 | 0 |" in run.stdout
    assert "[model 2/2] null" in run.stdout
    assert in_process(capsys, *home, "models", "list")[1].split() == ["oracle", "null"]
    assert in_process(capsys, *home, "models", "remove", "null")[0] == 0
    assert in_process(capsys, *home, "models", "add", "baseline@bm25-k2")[0] == 0
    code, _, err = in_process(capsys, *home, "models", "add", "baseline@nope")
    assert code == 2 and err.startswith("error: ") and "expected MODEL@MODE-kK" in err
    assert in_process(capsys, *home, "models", "list")[1].split() == ["oracle", "baseline@bm25-k2"]
    assert (tmp_path / "home" / "storage" / "artifacts" / "model_comparison.parquet").is_file()


def test_a_run_started_where_an_event_loop_is_running_answers_and_judges(shared_hotpotqa, tmp_path, capsys):
    """A Jupyter cell (or Playwright's sync API) runs inside an event loop, where asyncio.run
    refuses to start: the stages' calls must still run and no case may fail for it."""
    import asyncio

    async def notebook_cell():
        return in_process(
            capsys,
            "--dagster-home",
            str(tmp_path),
            "run",
            "--dataset",
            str(shared_hotpotqa),
            "--sample",
            "4",
            "--models",
            "oracle",
        )

    code, out, err = asyncio.run(notebook_cell())
    assert code == 0, err
    assert "| oracle | reference | 4 | 0 |" in out


def test_a_malformed_dataset_is_one_line_naming_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    code, _, err = in_process(
        capsys, "--dagster-home", str(tmp_path / "h"), "run", "--dataset", str(bad), "--models", "null"
    )
    assert code != 0
    assert f"{bad}, line 1" in err


@pytest.mark.slow  # the installed script, a process per attempt
def test_names_that_could_escape_storage_are_refused_before_anything_is_written(tmp_path):
    home = tmp_path / "home"
    for args in (
        ["models", "add", "claude-x/../../y"],
        ["run", "--models", "anthropic:../../../../tmp/x/PWNED"],
    ):
        result = rag_eval("--dagster-home", str(home), *args)
        assert result.returncode == 2, result.stderr
        assert (
            result.stderr.startswith("error: invalid answer model name") and "Traceback" not in result.stderr
        )
    assert not (home / "storage" / "artifacts").exists()
    config = tmp_path / "rag_eval.yaml"
    config.write_text("answer_models:\n  - {name: '../../x/PWNED', provider: offline, model: oracle}\n")
    result = rag_eval("--config", str(config), "--dagster-home", str(home), "models", "list")
    assert result.returncode == 2 and "answer_models.0.name" in result.stderr


def test_an_unknown_judge_or_model_is_refused_with_the_known_ones(shared_hotpotqa, tmp_path, capsys):
    home = ["--dagster-home", str(tmp_path / "home")]
    code, _, err = in_process(
        capsys, *home, "run", "--dataset", str(shared_hotpotqa), "--judges", "gpt-judge"
    )
    assert code == 2 and err.startswith("error: unknown judge 'gpt-judge'")
    code, _, err = in_process(capsys, *home, "run", "--dataset", str(shared_hotpotqa), "--models", "gpt-17")
    assert code == 2 and "known: baseline, compliant, extractive-baseline, null, oracle" in err


@pytest.mark.slow  # two full runs of the written configuration (the fast path keeps the rest of init)
def test_the_init_configuration_keeps_its_calibration_models(shared_hotpotqa, tmp_path, monkeypatch, capsys):
    """The file `rag-eval init` writes names its models (a named null model among them): the
    judge validation must still expect correctness 0 of it and 1 of the oracle."""
    monkeypatch.chdir(tmp_path)  # as a user runs it: init, then run, in one folder
    assert in_process(capsys, "init", "rag_eval.yaml")[0] == 0
    settings = load_settings(tmp_path / "rag_eval.yaml")
    named = {m.name: m.model for m in settings.answer_models}
    null_like = next(name for name, model in named.items() if model == "null")
    oracle_like = next(name for name, model in named.items() if model == "oracle")
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        arguments = ["--dagster-home", str(tmp_path / "home"), "run", "--dataset", str(shared_hotpotqa)]
        code, _, err = in_process(
            capsys, *arguments, "--sample", "10", "--judges", "reference,claude-sonnet-4-6"
        )
    assert code == 0, err
    instance = open_instance(str(tmp_path / "home"))
    validation: pd.DataFrame = load_asset(instance, "judge_validation")
    correctness = validation[validation["axis"] == "correctness"].set_index("answer_model")
    assert correctness.loc[null_like, "calibration_expected"] == 0.0
    assert correctness.loc[oracle_like, "calibration_expected"] == 1.0
    assert correctness.loc[null_like, "calibration_ok"] and correctness.loc[oracle_like, "calibration_ok"]


@pytest.mark.slow  # two knowledge bases of all 4,943 passages
def test_knowledge_base_scope_all_keeps_the_index_whatever_the_sample(tmp_path, capsys):
    """scope all: the knowledge base holds every question's paragraphs (4,943 distinct in the
    bundled file), so retrieval scores do not move with the sample size; only the sample is
    evaluated."""
    config = tmp_path / "rag_eval.yaml"
    config.write_text("knowledge_base: {scope: all}\n")
    sizes = {}
    for sample in ("5", "10"):
        home = tmp_path / f"home-{sample}"
        arguments = ["--config", str(config), "--dagster-home", str(home), "run", "--models", "oracle"]
        code, _, err = in_process(capsys, *arguments, "--sample", sample)
        assert code == 0, err
        instance = open_instance(str(home))
        manifest = load_asset(instance, "kb_index")
        cases = load_asset(instance, "judgement_list")
        sizes[sample] = (manifest.documents, len(cases))
    assert sizes == {"5": (4943, 5), "10": (4943, 10)}


def readme_commands() -> list[list[str]]:
    """Every `rag-eval` command of the README's and the docs pages' code blocks, in reading order
    (the README, then the pages as the docs index lists them), as the words a shell would pass."""
    return [
        words[1:]
        for page in reading_order()
        for words in commands(page.read_text(), (".venv/bin/rag-eval ",))
    ]


@pytest.mark.slow  # the real local model answers and judges, Claude answers 150 cases
def test_every_readme_command_runs_as_written(tmp_path, monkeypatch, capsys):
    """The README's commands in order, word for word, in one instance with no configuration
    file: the quickstart, the Claude example, models, explain, worst, gate, the GitHub
    Actions example (built-in pr profile, the haiku alias), against the tests' Messages-API
    server, and the real local model answering and judging. Only `--config rag_eval.yaml run`
    needs the user's own files (test_custom_data.py)."""
    commands = readme_commands()
    assert [c[0] for c in commands if c[0] != "--config"] == [
        "run",  # README: the quickstart
        "run",  # and with Claude
        "models",  # answer models: add, list, remove
        "models",
        "models",
        "run",  # the real local model answers
        "run",  # and judges
        "plan",  # judges and statistics
        "plan",
        "images",  # your data: images (its own instance: data/test_images.py)
        "run",  # the multimodal sample (judges/test_vision.py, elasticsearch/test_elasticsearch_images.py)
        "review",  # human review
        "review",  # the test labels the exported queue where the browser would save it
        "ui",  # serves until stopped: driven in the browser by ui/test_dagster_ui.py
        "explain",
        "worst",
        "gate",
        "run",  # the offline CI example
        "gate",
        "run",  # the CI example with Claude
        "gate",
        "run",  # the pull-request diff: main's run, pinned
        "baseline",
        "run",  # the branch's run
        "diff",  # the comment
        "diff",  # the gate
        "ui",  # scaling out
        "backfill",  # no daemon here: said, then evaluated in this process
        "run",  # the PostgreSQL example, here on the test's instance (on PostgreSQL, with its
        "ui",  # UI: faults/test_team_deployment.py)
    ]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))  # ~/Downloads, where the labelling page saves
    home = ["--dagster-home", str(tmp_path / "home")]
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for words in commands:
            if words[0] in ("--config", "ui", "images") or "multimodal-sample" in words:
                continue  # a file of the user's, a server, or a dataset of its own: tested apart
            if words[:2] == ["review", "import"]:  # a reviewer labels every row of the queue
                queue = [json.loads(line) for line in (tmp_path / "review" / "first-review.jsonl").open()]
                saved = Path(words[2].replace("~", str(tmp_path)))
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_text(
                    "".join(json.dumps({**r, "label": 1, "reviewer": "readme"}) + "\n" for r in queue)
                )
            code, out, err = in_process(capsys, *home, *words)
            # a gate may fail on its numbers, and so may the blocking judge-error check of a run
            # that a 135M model judges
            allowed = (0, 1) if words[0] == "gate" or "reference,local:smollm2" in words else (0,)
            assert code in allowed, (words, err)
            if words[:3] == ["run", "--profile", "pr"] and "haiku" in words:
                assert "| haiku | claude-sonnet-4-6 | 150 |" in out  # the pr profile's 150 cases
            if words[0] == "gate":
                assert ("all gates passed" in out) == (code == 0)
            if words[0] == "gate" and "--bound" in words:  # the offline CI example passes
                assert code == 0 and "| context_recall | all | reference |" in out
            if words[0] == "plan":
                assert "paired cases" in out
            if words[:2] == ["review", "import"]:
                assert "40 labels by readme kept in" in out and "| reference | correctness | 20 |" in out
            if "local:smollm2,extractive-baseline,oracle,null" in words:  # a real model, offline
                assert "| local:smollm2 | reference | 35 | 0 |" in out
                assert "| extractive-baseline | local:smollm2 | reference | 35 |" in out  # paired
            if words[0] == "diff":  # the branch changed nothing: no regression, the comment written
                assert "no metric is significantly worse" in out and "150 compared" in out
                if "--output" in words:
                    assert (tmp_path / "diff.md").read_text().startswith("## rag-eval diff: current")
            if words[0] == "backfill":
                assert "no Dagster daemon is running" in out and "| sonnet | reference | 35 | 0 |" in out
            if "reference,local:smollm2" in words:  # the real small model judges, and is flagged
                assert "| oracle | local:smollm2 | 10 |" in out
                assert "judge local:smollm2 fails calibration on oracle/null" in out + err


def test_built_in_profiles_need_no_configuration_file(tmp_path, capsys):
    home = ["--dagster-home", str(tmp_path / "home")]
    code, out, err = in_process(capsys, *home, "run", "--profile", "dev", "--models", "oracle")
    assert code == 0, err
    assert "| oracle | reference | 30 |" in out
    code, _, err = in_process(capsys, *home, "run", "--profile", "weekly")
    assert code == 2 and "unknown profile 'weekly'; defined: dev, nightly, pr" in err


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_the_quickstart_runs_offline_and_prints_the_readme_table(tmp_path):
    """`rag-eval run` with nothing else, the hub unreachable: the bundled sample, and the table
    the README shows, row for row."""
    result = rag_eval("run", cwd=tmp_path, env={"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("## Evaluate your own agent", 1)[0]
    expected = [line for line in quickstart.splitlines() if line.startswith("| ")]
    printed = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert printed == expected and len(expected) == 8  # the comparison, then the paired verdicts
    assert " - dagster - " not in result.stdout + result.stderr  # progress lines, not Dagster's log
    assert "Warning: " not in result.stderr, result.stderr  # no library's warning before the output
    assert "  answered (oracle@bm25-k4): 35/35" in result.stdout
    assert (
        "wall time" in result.stdout and "rag-eval --dagster-home" in result.stdout and " ui" in result.stdout
    )
    report = tmp_path / ".dagster_home" / "storage" / "artifacts" / "eval_report.html"
    assert report.is_file() and f"report: {report}" in result.stdout  # where README says it is


def test_what_can_be_checked_first_is_one_line_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    home = ["--dagster-home", str(tmp_path / "home")]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cases = {
        (
            "--dataset",
            str(tmp_path / "missing.jsonl"),
        ): f"dataset file not found: {tmp_path / 'missing.jsonl'}",
        ("--dataset", str(empty)): f"no questions in {empty}: the file is empty",
        ("--models", "haiku"): "haiku needs ANTHROPIC_API_KEY: export it",
        ("--judges", "reference,sonnet"): "judge sonnet needs ANTHROPIC_API_KEY",
        ("--models", "oracle@semantic-k4"): "oracle@semantic-k4 retrieves by meaning",
    }
    for arguments, message in cases.items():
        code, _, err = in_process(capsys, *home, "run", *arguments)
        assert code == 2 and len(err.splitlines()) == 1 and err.startswith(f"error: {message}"), err
    assert not (tmp_path / "home" / "storage" / "artifacts").exists()  # nothing ran


def test_a_failed_run_is_one_line_and_verbose_shows_the_trace(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('["not", "an", "object"]\n')
    home = ["--dagster-home", str(tmp_path / "home")]
    code, _, err = in_process(capsys, *home, "run", "--dataset", str(bad), "--models", "oracle")
    assert code == 2 and err.splitlines() == [f"error: {bad}, line 1: expected a JSON object, got list"]
    code, out, err = in_process(
        capsys, *home, "run", "--dataset", str(bad), "--models", "oracle", "--verbose"
    )
    assert code == 2 and "Traceback (most recent call last)" in err and "MalformedRowError" in err


def test_small_mistakes_get_a_clear_line(tmp_path, capsys, evaluated):
    assert in_process(capsys, "init", str(tmp_path / "sub" / "dir" / "custom.yaml"))[0] == 0
    assert (tmp_path / "sub" / "dir" / "custom.yaml").is_file()
    home = ["--dagster-home", str(evaluated.home)]
    with pytest.raises(SystemExit) as exit_:
        cli.main([*home, "worst", "--model", "oracle", "-n", "-3"])
    assert exit_.value.code == 2 and "expected a positive number, got -3" in capsys.readouterr().err
    code, _, err = in_process(capsys, *home, "worst", "--model", "oracle", "--judge", "claude-sonnet-4-6")
    assert (
        code == 2 and "judge 'claude-sonnet-4-6' did not score this model; judges that did: reference" in err
    )
    code, _, err = in_process(capsys, *home, "models", "remove", "never-registered")
    assert code == 2 and err.startswith("error: not registered: never-registered (registered: ")
    for option, value, said in (
        ("--sample", "-3", "expected 0 or a positive number, got -3"),
        ("--concurrency", "0", "expected a positive number, got 0"),
        ("--sample", "ten", "expected a whole number, got 'ten'"),
    ):
        with pytest.raises(SystemExit) as exit_:  # refused before the knowledge base is built
            cli.main([*home, "run", option, value])
        assert exit_.value.code == 2 and said in capsys.readouterr().err
    typo = tmp_path / "evaluatd"  # a mistyped home is not created by a command that only reads
    code, _, err = in_process(capsys, "--dagster-home", str(typo), "gate", "--model", "oracle")
    assert code == 2 and err.startswith(f"error: no Dagster instance at {typo}: `rag-eval run` creates one")
    assert not typo.exists()


def test_every_rag_eval_command_of_the_readme_is_valid():
    """Each `rag-eval` command of the README and the docs parses with the real parser."""
    commands = readme_commands()
    assert len(commands) >= 10
    parser = cli.build_parser()
    for words in commands:
        parser.parse_args(words)


def test_every_command_names_a_handler_that_exists():
    """Each command and subcommand, as `rag-eval --help` lists it, runs a function its handler
    module has: a misnamed handler fails here, not when a user first runs the command."""
    import argparse

    def leaves(parser: argparse.ArgumentParser, words: tuple[str, ...]):
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not groups:
            yield words, parser.get_default("handler")
        for group in groups:
            for name, sub in group.choices.items():
                yield from leaves(sub, (*words, name))

    found = dict(leaves(cli.build_parser(), ()))
    assert len(found) >= 30 and ("kb", "health") in found and ("production", "feedback") in found
    for words, handler in found.items():
        assert handler is not None, words
        assert callable(handler.load()), words


def test_out_of_range_configuration_is_refused_with_the_field_named(tmp_path, capsys):
    for text, field in [
        ("max_judge_error_share: 5\n", "max_judge_error_share: Input should be less than or equal to 1"),
        ("thresholds: {correctness: 7}\n", "thresholds: thresholds are scores between 0 and 1"),
        ("dataset: {sample_size: -3}\n", "dataset.sample_size: Input should be greater than or equal to 0"),
        (
            "statistics: {significance_level: 2}\n",
            "statistics.significance_level: Input should be less than 1",
        ),
        (  # a name the offline provider does not have: before any work, not a KeyError in a step
            "answer_models: [{name: ex, provider: offline, model: extractive}]\n",
            "answer_models.0: answer model 'ex': no offline model 'extractive' (the offline models: "
            "extractive-baseline, baseline, oracle, null, compliant)",
        ),
    ]:
        config = tmp_path / "rag_eval.yaml"
        config.write_text(text)
        code, _, err = in_process(capsys, "--config", str(config), "run")
        assert code == 2 and err.startswith(f"error: {config}: {field}"), err


@pytest.mark.slow  # several full runs
def test_a_failing_model_does_not_stop_the_others(tmp_path, monkeypatch, capsys):
    """A model whose key is refused (401) fails at its first calls, not after 35 futile ones; one
    whose every case fails is a failed model too; the others are evaluated and compared; exit 1."""
    from stand_ins.anthropic_api import error_reply

    def refuse(request):
        if request.get("model") == "claude-haiku-4-5":
            return error_reply(401, "authentication_error")
        return error_reply(400, "invalid_request_error")  # sonnet: every call fails (not retried)

    home = ["--dagster-home", str(tmp_path / "home")]
    with FakeAnthropic(responder=refuse) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        # alone, on a new instance: nothing to compare, said as such, not a crash of the comparison
        alone = ["--dagster-home", str(tmp_path / "alone")]
        code, out, err = in_process(capsys, *alone, "run", "--sample", "4", "--models", "haiku")
        assert code == 1 and "(no model of this run has a summary)" in out
        report = (tmp_path / "alone" / "storage" / "artifacts" / "eval_report.html").read_text()
        assert "no answer model has been evaluated yet" in report
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and lines[0].startswith("error: haiku failed: AuthenticationError (HTTP 401)")
        code, _, err = in_process(capsys, *alone, "gate", "--model", "haiku", "--min", "correctness=0.5")
        assert code == 2 and err == (
            "error: no metric_summary of haiku stored yet (its evaluation failed or never ran; the UI "
            "shows its runs): evaluate it with `rag-eval run --models haiku`\n"
        )
        before = len(server.requests)
        code, out, err = in_process(
            capsys, *home, "run", "--sample", "12", "--models", "haiku,oracle,sonnet,null"
        )
        refused = sum(1 for r in server.requests[before:] if r.get("model") == "claude-haiku-4-5")
    assert code == 1
    assert "| oracle | reference | 12 |" in out and "| null | reference | 12 |" in out
    assert "| haiku |" not in out and "| sonnet |" not in out
    assert refused <= 8  # at most the calls already in flight (concurrency 8), never all 12
    lines = [line for line in err.splitlines() if line.startswith("error:")]  # not the server's noise
    assert len(lines) == 2
    assert lines[0].startswith("error: haiku failed: AuthenticationError (HTTP 401)")
    assert lines[1].startswith("error: sonnet failed: all 12 cases failed; the first: ")


@pytest.mark.slow  # four runs on two instances
def test_stale_results_never_pass_the_gate(tmp_path, monkeypatch, capsys):
    """A good 35-case run, then a 40-case run whose judge fails on every case (the blocking
    judge-error check stops its summary): the 35-case summary stays stored, but the gate fails
    saying why, explain and worst mark it, and model_comparison marks it stale."""
    from stand_ins.anthropic_api import SimulatedModel, text_reply

    healthy = SimulatedModel()
    home = ["--dagster-home", str(tmp_path / "home")]
    judged = ["--models", "oracle", "--judges", "reference,claude-sonnet-4-6"]
    with FakeAnthropic(responder=healthy) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        assert in_process(capsys, *home, "run", "--sample", "35", *judged)[0] == 0
        assert in_process(capsys, *home, "gate", "--model", "oracle", "--min", "correctness=0.3")[0] == 0
        server.responder = lambda request: text_reply(request, "no verdict")  # the judge breaks
        code, _, err = in_process(capsys, *home, "run", "--sample", "40", *judged)
    # the check's own words, not Dagster's "1 blocking asset check failed"
    assert code == 1 and "error: oracle failed: judge_scores judge_error_share: claude-sonnet-4-6: " in err
    code, out, _ = in_process(capsys, *home, "gate", "--model", "oracle", "--min", "correctness=0.3")
    assert code == 1 and "oracle: FAILED: stale results" in out
    assert "stale: evaluation run " in out and " failed; these are the values of run " in out
    assert "stale: computed on case set" in out and "stale: computed on index version" in out
    code, out, _ = in_process(capsys, *home, "worst", "--model", "oracle")
    assert code == 0 and out.startswith("note: stale results: computed on case set")
    assert "note: stale results: evaluation run " in out
    instance = open_instance(str(tmp_path / "home"))
    comparison = load_asset(instance, "model_comparison")
    assert comparison.set_index("judge_id").loc["reference", "stale"]
    report = load_asset(instance, "eval_report")
    assert '<div id="stale"' in report and "computed on case set" in report
    broken = load_asset(instance, "judge_scores", "oracle")
    judge_errors = int((broken["status"] == "judge_error").sum())
    assert judge_errors > 4  # over the 10% the blocking check allows
    # the broken judge's outputs were never cached: against a healthy API the same run now
    # judges every case, the blocking check passes, and the gate trusts the new summary
    with FakeAnthropic(responder=healthy) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        assert in_process(capsys, *home, "run", "--sample", "40", *judged)[0] == 0
        judged_again = sum("tools" in r for r in server.requests)
    assert judged_again == judge_errors  # exactly the failed judgements, none served from a cached failure
    code, out, _ = in_process(capsys, *home, "gate", "--model", "oracle", "--min", "correctness=0.3")
    assert code == 0 and "stale" not in out


def test_huge_and_unsupported_documents_are_skipped_by_name_and_the_run_goes_on(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "huge.txt").write_text("filler " * 200_000)  # 1.4 MB, over the 1 MB set below
    (docs / "slides.pptx").write_bytes(b"PK")
    (docs / "handbook.md").write_text(" ".join(f"rule{i}." for i in range(450)))
    config = tmp_path / "rag_eval.yaml"
    config.write_text("dataset: {documents: docs, max_file_mb: 1}\n")
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    code, out, err = in_process(capsys, *home, "run", "--sample", "5", "--models", "oracle")
    assert code == 0, err
    assert "warning: skipped: huge.txt: 1.4 MB is over the 1.0 MB limit" in out
    assert "warning: skipped: slides.pptx: unsupported file type '.pptx'" in out
    passages = load_asset(
        open_instance(str(tmp_path / "home")),
        "kb_passages",
    )
    handbook = passages[passages["title"] == "handbook"]
    assert len(handbook) == 3 and "huge" not in set(passages["title"])  # chunked; the huge file left out
