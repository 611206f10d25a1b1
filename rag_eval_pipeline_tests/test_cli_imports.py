"""Commands answer at once: parsing a command (``--help``, a wrong flag) imports none of the heavy
libraries, and nothing reads the configuration file before a command needs it, so a broken file
is one ``error:`` line of that command, never of ``--help``. Checked by what a fresh interpreter
has imported, not by time."""

import json
import subprocess
import sys

import pytest

# what parsing must never import: Dagster, the SDKs, the numerics and the table libraries
HEAVY = ("dagster", "anthropic", "openai", "scipy", "pandas", "pyarrow", "numpy", "elasticsearch", "httpx")
# what reading a configuration file must never import (numpy may come with the judges' table,
# which checks that a custom metric is not named like a built-in judge)
NOT_FOR_SETTINGS = ("dagster", "anthropic", "openai", "scipy", "pandas", "pyarrow", "elasticsearch")

PROBE = """
import json, sys
from rag_eval_pipeline.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as stop:
    code = stop.code
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}, out)
"""


def _probe(tmp_path, *words: str) -> tuple[int, set[str], str]:
    record = tmp_path / "probe.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(record), *words], cwd=tmp_path, capture_output=True, text=True
    )
    result = json.loads(record.read_text())
    return result["code"], set(result["modules"]), done.stdout + done.stderr


@pytest.mark.parametrize(
    "words",
    [
        ("--help",),
        ("run", "--help"),
        ("explain", "--help"),
        ("production", "run", "--help"),
        ("review", "import", "--help"),
        ("run", "--sample", "ten"),  # an argument error
        ("gate", "--model", "m", "--bound", "median"),
        ("no-such-command",),
    ],
)
def test_parsing_a_command_imports_nothing_heavy(tmp_path, words):
    code, modules, output = _probe(tmp_path, *words)
    assert code in (0, 2), output
    assert not modules & set(HEAVY), f"rag-eval {' '.join(words)} imported {sorted(modules & set(HEAVY))}"


def test_help_works_beside_a_broken_configuration_which_its_command_names_in_one_line(tmp_path):
    (tmp_path / "rag_eval.yaml").write_text(
        "production: {source: [], sample: 10}\ndataset: {sample_size: -3}\n"
    )
    code, _, output = _probe(tmp_path, "--help")
    assert code == 0 and "usage: rag-eval" in output
    code, _, output = _probe(tmp_path, "agents", "list")
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, output
    assert lines[0].startswith("error: rag_eval.yaml: ")
    assert "production.source: unknown key (did you mean 'sources'?)" in lines[0]
    assert "dataset.sample_size: Input should be greater than or equal to 0" in lines[0]
    assert "Traceback" not in output and "production.sources: Field required" not in output
    (tmp_path / "rag_eval.yaml").write_text("dataset: [unclosed\n")
    code, _, output = _probe(tmp_path, "models", "list")
    assert code == 2 and output.strip().count("\n") == 0, output
    assert output.startswith("error: rag_eval.yaml: not valid YAML: line 2, column 1: expected ','")


def test_reading_a_configuration_and_importing_the_code_location_read_and_build_nothing(tmp_path):
    """The settings import no numerics, SDK or Dagster; the code location module builds nothing
    and reads no file at import (``dagster dev`` calls its definitions function)."""
    (tmp_path / "rag_eval.yaml").write_text("judgez: [reference]\n")  # would fail if it were read
    script = (
        "import sys\n"
        "from rag_eval_pipeline.config import example_config, load_settings\n"
        "(__import__('pathlib').Path('example.yaml')).write_text(example_config())\n"
        "load_settings('example.yaml')\n"
        "settings_modules = {m.split('.')[0] for m in sys.modules}\n"
        "import rag_eval_pipeline.definitions\n"
        f"print(sorted(settings_modules & set({NOT_FOR_SETTINGS!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_reading_commands_that_need_no_instance_api_import_no_dagster(tmp_path, capsys):
    """`models list` on a local home reads its asset index directly, and `plan` from a stated
    assumption needs only the exact power: neither imports Dagster or pandas, and the models
    listed are the ones Dagster lists."""
    from rag_eval_pipeline.defs.partitions import registered_models
    from rag_eval_pipeline.instance.home import open_instance
    from rag_eval_pipeline_tests.support.cli import in_process

    home = tmp_path / "home"
    assert in_process(capsys, "--dagster-home", str(home), "models", "add", "oracle", "null")[0] == 0
    code, modules, output = _probe(tmp_path, "--dagster-home", str(home), "models", "list")
    assert code == 0 and output.split() == registered_models(open_instance(str(home))) == ["oracle", "null"]
    assert not modules & {"dagster", "pandas", "pyarrow", "scipy"}, sorted(modules & set(HEAVY))
    code, modules, output = _probe(tmp_path, "plan", "--difference", "0.1")
    assert code == 0 and "paired cases" in output, output
    assert not modules & {"dagster", "pandas", "pyarrow", "anthropic", "openai"}, sorted(modules & set(HEAVY))


def test_explain_worst_and_gate_read_a_local_home_without_dagster_as_dagster_would(evaluated, tmp_path):
    """Reading a stored case needs the home's files, not Dagster (1.3 s to import, 1.5 s more to
    open its storage): a local home's SQLite history answers what the opened instance answers,
    asset by asset and model by model, and the commands import no Dagster."""
    from rag_eval_pipeline.defs.names import EVALUATION_STEPS, METRIC_SUMMARY, SNAPSHOT_ASSETS
    from rag_eval_pipeline.instance.lineage import InstanceHistory
    from rag_eval_pipeline.instance.location import local_history

    local, opened = local_history(str(evaluated.home)), InstanceHistory(evaluated.instance)
    assert local is not None and local.storage_directory() == opened.storage_directory()
    models = opened.registered_models()
    assert local.registered_models() == models and len(models) == 3
    for model in models:
        assert local.newest_finished_run(model) == opened.newest_finished_run(model) != None  # noqa: E711
        for asset in (*SNAPSHOT_ASSETS, *EVALUATION_STEPS, METRIC_SUMMARY):
            partition = None if asset in SNAPSHOT_ASSETS else model
            assert local.latest_run(asset, partition) == opened.latest_run(asset, partition), (asset, model)
    assert local.newest_finished_run("no-such-model") is None and local.latest_run("nothing", None) is None
    qid = evaluated.defs.load_asset_value(
        "candidate_answers", instance=evaluated.instance, partition_key="oracle"
    )["qid"][0]
    home = ["--dagster-home", str(evaluated.home)]
    for words in (
        ["explain", qid, "--model", "oracle"],
        ["worst", "--model", "oracle"],
        ["gate", "--model", "oracle", "--min", "correctness=0.5"],
        ["diff", "null", "oracle"],
    ):
        code, modules, output = _probe(tmp_path, *home, *words)
        assert code == 0 and "dagster" not in modules, (words, output[-2000:])


def test_diff_reads_the_scores_records_of_a_local_home_as_dagster_gives_them(evaluated):
    """What `diff` pins and loads (the scores' materializations, newest first or of one run, and
    the inputs their tags point at) is the same record from the home's SQLite as from the
    opened instance, tags included."""
    from rag_eval_pipeline.defs.evaluations import load_evaluation, pin
    from rag_eval_pipeline.instance.lineage import InstanceHistory
    from rag_eval_pipeline.instance.location import local_history

    local, opened = local_history(str(evaluated.home)), InstanceHistory(evaluated.instance)
    newest = opened.score_records(None, 100)
    assert local.score_records(None, 100) == newest and len(newest) >= 3
    for model in opened.registered_models():
        assert local.score_records(model, 5) == opened.score_records(model, 5) != []
    record = newest[0]
    assert any(key.startswith("dagster/input_event_pointer/") for key in record.tags)
    in_run = opened.run_score_records(record.run_id)
    # (a run's own events have the run database's ids; the asset index's are the ones pointed at)
    assert [(r.run_id, r.partition, r.tags) for r in local.run_score_records(record.run_id)] == [
        (r.run_id, r.partition, r.tags) for r in in_run
    ]
    for key, value in record.tags.items():
        if key.startswith("dagster/input_event_pointer/"):
            asset = key.removeprefix("dagster/input_event_pointer/")
            pointed = opened.materialization(asset, int(value))
            assert pointed is not None and local.materialization(asset, int(value)) == pointed
    assert local.materialization("judge_scores", 10**9) is None
    for source in (local, opened):
        pinned = pin(source, record.partition)
        loaded = load_evaluation(source, pinned)
        assert loaded.run_id == record.run_id and loaded.cases is not None and loaded.answers is not None
        assert loaded.judgement_list is not None


def test_the_rag_eval_process_tells_the_collector_what_its_imports_and_its_end_need_not_scan(tmp_path):
    """The installed script is ``entry``, which freezes what the command imported (the
    collector's passes over it were about 2 s of the 500 x 3 run) and the heap at the end (the
    exit's pass, 0.8 s); a caller of ``main`` keeps its collector as it was."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "rag-eval"]
    assert script.value == "rag_eval_pipeline.cli:entry"
    probe = """
import gc, sys
from rag_eval_pipeline.cli import entry, main
sys.argv = ["rag-eval", "plan", "--difference", "0.2"]
main(sys.argv[1:])
after_main = gc.get_freeze_count()
frozen_when_loaded = []
entry.__globals__["gc"] = type("Probe", (), {"freeze": staticmethod(
    lambda: (frozen_when_loaded.append(len(sys.modules)), gc.freeze()))})
code = entry()
print(after_main, len(frozen_when_loaded), gc.get_freeze_count() > 0, code)
"""
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.split()[-4:] == ["0", "2", "True", "0"], done.stdout + done.stderr


def test_a_reader_that_goes_away_ends_the_command_without_a_traceback(tmp_path):
    """`rag-eval plan | head -1`: the pipe closes before the command writes; what is left goes
    nowhere and the process ends as SIGPIPE would end it, saying nothing."""
    command = [sys.executable, "-m", "rag_eval_pipeline.cli", "plan", "--difference", "0.1"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # long before the interpreter has started
    errors = process.stderr.read().decode()
    assert process.wait() == 141, errors
    assert errors == ""
