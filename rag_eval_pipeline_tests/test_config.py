import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.config import ConfigError, example_config, load_settings
from rag_eval_pipeline.definitions import build_definitions


def test_init_writes_a_valid_commented_example(tmp_path, capsys):
    target = tmp_path / "rag_eval.yaml"
    assert cli.main(["init", str(target)]) == 0
    assert target.read_text() == example_config() and "# " in example_config()
    settings = load_settings(target)
    # the same names as the CLI's defaults, so the file and `rag-eval run` evaluate one set
    assert [m.name for m in settings.answer_models] == ["extractive-baseline", "oracle", "null"]
    assert settings.dataset.documents == str(tmp_path / "data" / "documents")  # relative to the file
    assert cli.main(["init", str(target)]) == 2  # never overwrites
    defs = build_definitions(settings=settings)
    assert [s.name for s in defs.schedules] == ["nightly_schedule"]
    assert defs.resolve_schedule_def("nightly_schedule").cron_schedule == "0 3 * * *"


def test_profiles_override_the_sample_and_judges(tmp_path):
    target = tmp_path / "c.yaml"
    target.write_text(example_config())
    settings = load_settings(target)
    assert settings.with_profile("dev").dataset.sample_size == 30
    nightly = settings.with_profile("nightly").dataset
    assert (nightly.sample_size, nightly.selection) == (50, "random")
    with pytest.raises(ConfigError, match="unknown profile 'prod'; defined: dev, nightly, pr"):
        settings.with_profile("prod")


def test_invalid_files_name_the_file_and_field(tmp_path, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "dataset:\n  sample_size: many\nconcurrency: 0\n"
        "answer_models: [{name: x, provider: mistral, model: y}]\n"
    )
    with pytest.raises(ConfigError) as err:
        load_settings(bad)
    message = str(err.value)
    assert str(bad) in message
    assert (
        "dataset.sample_size" in message
        and "concurrency" in message
        and "answer_models.0.provider" in message
    )
    (tmp_path / "typo.yaml").write_text("judgez: [reference]\n")
    with pytest.raises(ConfigError, match=r"judgez: unknown key \(did you mean .judges.\?\)"):
        load_settings(tmp_path / "typo.yaml")
    (tmp_path / "custom.yaml").write_text("dataset: {kind: custom}\n")
    with pytest.raises(ConfigError, match="needs dataset.questions"):
        load_settings(tmp_path / "custom.yaml")
    (tmp_path / "graph.yaml").write_text("knowledge_base: {vector_search: hnsw}\n")
    with pytest.raises(ConfigError, match="vector_search: hnsw needs an embedding_model"):
        load_settings(tmp_path / "graph.yaml")
    (tmp_path / "graph.yaml").write_text("knowledge_base: {vector_search: annoy, embedding_model: minilm}\n")
    with pytest.raises(ConfigError, match="knowledge_base.vector_search"):
        load_settings(tmp_path / "graph.yaml")
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "missing.yaml")
    monkeypatch.setenv("RAG_EVAL_CONFIG", str(tmp_path / "typo.yaml"))
    with pytest.raises(ConfigError):
        load_settings()


def _field_names(model: type, prefix: str = "") -> list[str]:
    """Every setting of a settings model, its sections' settings included, as dotted paths."""
    from pydantic import BaseModel

    names = []
    for name, field in model.model_fields.items():
        names.append(prefix + name)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names += _field_names(annotation, f"{prefix}{name}.")
    return names


def test_the_example_documents_every_setting_at_its_default(tmp_path):
    """`rag-eval init` writes every setting a user may need (one found only in the source is a
    setting nobody finds), each at the value Settings() gives it."""
    from rag_eval_pipeline.config import Settings

    text = example_config()
    undocumented = [path for path in _field_names(Settings) if f"{path.rsplit('.', 1)[-1]}:" not in text]
    assert undocumented == []
    target = tmp_path / "rag_eval.yaml"
    target.write_text(text)
    loaded, defaults = load_settings(target), Settings()
    for section in Settings.model_fields:
        if section in ("answer_models", "dataset", "review"):  # named entries; paths relative to the file
            continue
        assert getattr(loaded, section) == getattr(defaults, section), section
    assert loaded.dataset.model_copy(update={"documents": "data/documents"}) == defaults.dataset
    assert loaded.review.model_copy(update={"folder": "review"}) == defaults.review
    assert loaded.review.folder == str(tmp_path / "review")  # relative to the file, like documents
    assert loaded.configured_models() == defaults.configured_models()
