"""The configuration file's settings as the one resource every other resource, asset, check and
sensor reads them from."""

from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.judges.registry import JudgeRegistry, Judging


class SettingsResource(dg.ConfigurableResource):
    """``rag_eval.yaml``, validated once by pydantic and handed to every asset, check, sensor
    and resource typed: the other resources take their sections from it, so a setting reaches
    them all by one route. The registries that turn names into specs are built from it."""

    settings_json: str = Field(
        default_factory=lambda: Settings().model_dump_json(),
        description="The validated settings; edit rag_eval.yaml, not this value.",
    )

    _settings: Settings | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> "SettingsResource":
        return cls(settings_json=settings.model_dump_json())

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = Settings.model_validate_json(self.settings_json)
        return self._settings

    def section(self, name: str, where: str) -> Any:
        """The configuration's ``name`` section, which the caller cannot do without: a section
        left out is one line saying where it is explained (``where``)."""
        chosen = getattr(self.settings, name)
        if chosen is None:
            raise ValueError(f"no {name} section in the configuration file ({where})")
        return chosen

    def answer_registry(self) -> AnswerRegistry:
        return self.settings.answer_registry()

    def judge_registry(self) -> JudgeRegistry:
        return JudgeRegistry(self.settings.custom_metrics, self.settings.abstention())

    def judging(
        self, judges: list[str] | None = None, repeats: int | None = None, jury: str | None = None
    ) -> Judging:
        """A run's judging: what its run config asks, else the configuration file's."""
        settings = self.settings
        return self.judge_registry().judging(
            judges or settings.judges,
            repeats or settings.judge_repeats,
            jury or settings.jury,
            settings.judge_temperature,
        )


def storage_folder(context: dg.InitResourceContext) -> Path:
    """The instance's storage folder, where every resource keeps what it writes by default."""
    if context.instance is None:
        raise ValueError("this resource needs a Dagster instance (its storage folder)")
    return Path(context.instance.storage_directory())
