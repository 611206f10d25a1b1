"""`rag-eval worker` and a backfill for workers refuse, in one `error:` line with the remedy and
before any run is queued, what could not work: no workers section, an instance on SQLite, a
shared folder missing here, a broker that does not answer. And the instance a workers section
asks for queues its runs to Celery."""

import pytest
import yaml

from rag_eval_pipeline.instance.home import InstanceStorage, default_instance_settings
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.processes import free_port


def _config(tmp_path, **sections) -> str:
    path = tmp_path / "rag_eval.yaml"
    path.write_text(yaml.safe_dump(sections))
    return str(path)


@pytest.mark.parametrize(
    "case, said",
    [
        ("no section", "error: no workers section in the configuration file: add workers:"),
        ("sqlite", "error: workers need the instance on PostgreSQL"),
        ("no folder", "error: workers need storage.folder"),
        ("folder missing", "does not exist on this machine: mount the shared folder there"),
        ("broker unset", "error: RAG_EVAL_BROKER_URL is not set: export the broker's URL"),
        ("broker down", "error: the broker in RAG_EVAL_BROKER_URL does not answer ("),
    ],
)
def test_a_worker_that_could_not_work_is_refused_in_one_line(tmp_path, capsys, monkeypatch, case, said):
    monkeypatch.setenv("DAGSTER_PG_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("RAG_EVAL_BROKER_URL", f"redis://127.0.0.1:{free_port()}/0")
    shared = tmp_path / "shared"
    shared.mkdir()
    storage = {"instance": "postgres", "folder": str(shared)}
    sections = {"workers": {"launcher": "celery"}, "storage": storage}
    if case == "no section":
        sections.pop("workers")
    elif case == "sqlite":
        sections["storage"] = {"instance": "sqlite", "folder": str(shared)}
    elif case == "no folder":
        sections["storage"] = {"instance": "postgres"}
    elif case == "folder missing":
        sections["storage"] = {"instance": "postgres", "folder": str(tmp_path / "not-mounted")}
    elif case == "broker unset":
        monkeypatch.delenv("RAG_EVAL_BROKER_URL")
    home = tmp_path / "home"
    args = ["--config", _config(tmp_path, **sections), "--dagster-home", str(home)]
    code, out, err = in_process(capsys, *args, "worker", "--name", "w1")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and said in lines[0], err
    assert not home.exists()  # refused before anything was made


def test_a_backfill_for_workers_whose_broker_is_down_queues_nothing(tmp_path, capsys, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("DAGSTER_PG_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("RAG_EVAL_BROKER_URL", f"redis://127.0.0.1:{free_port()}/0")
    config = _config(
        tmp_path, workers={"launcher": "celery"}, storage={"instance": "postgres", "folder": str(shared)}
    )
    home = tmp_path / "home"
    code, out, err = in_process(
        capsys, "--config", config, "--dagster-home", str(home), "backfill", "--models", "null"
    )
    assert code == 2 and err.startswith("error: the broker in RAG_EVAL_BROKER_URL does not answer"), err
    assert not home.exists()


def test_a_workers_section_writes_the_celery_run_launcher_and_keeps_the_url_out_of_the_file():
    text = default_instance_settings(
        InstanceStorage("DAGSTER_PG_URL", "/mnt/shared", True, "RAG_EVAL_BROKER_URL", "gpu")
    )
    settings = yaml.safe_load(text)
    launcher = settings["run_launcher"]
    assert (launcher["module"], launcher["class"]) == (
        "rag_eval_pipeline.instance.workers",
        "WorkerRunLauncher",
    )
    assert launcher["config"] == {
        "broker": {"env": "RAG_EVAL_BROKER_URL"},
        "backend": {"env": "RAG_EVAL_BROKER_URL"},
        "default_queue": "gpu",
    }
    assert settings["run_monitoring"]["enabled"] is True  # what fails a dead worker's run
    assert "run_launcher" not in default_instance_settings(InstanceStorage("DAGSTER_PG_URL", "/mnt/shared"))


@pytest.mark.parametrize(
    "command, sections, said",
    [
        (["run"], {"workers": {}}, "error: --shards 2 spreads each model's cases over Celery workers"),
        (["backfill"], {}, "error: --shards 2 spreads each model's cases over Celery workers"),
        (["backfill"], {"workers": {}}, None),  # reaches the workers' checks: the broker is down
    ],
)
def test_shards_go_with_a_backfill_on_workers(tmp_path, capsys, monkeypatch, command, sections, said):
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv("DAGSTER_PG_URL", "postgresql://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("RAG_EVAL_BROKER_URL", f"redis://127.0.0.1:{free_port()}/0")
    config = _config(tmp_path, storage={"instance": "postgres", "folder": str(shared)}, **sections)
    home = tmp_path / "home"
    args = ["--config", config, "--dagster-home", str(home), *command, "--models", "null"]
    code, out, err = in_process(capsys, *args, "--shards", "2")
    expected = said or "error: the broker in RAG_EVAL_BROKER_URL does not answer"
    assert code == 2 and err.startswith(expected) and len(err.strip().splitlines()) == 1, err
    assert not home.exists()
    code, out, err = in_process(capsys, *args, "--shards", "257")
    assert code == 2 and err.startswith("error: --shards 257: at most 256 shards a model"), err
