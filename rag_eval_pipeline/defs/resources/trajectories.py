"""The agent's traces and the trajectories' reference behind one resource, read with the
configuration's ``trajectories`` section (the CLI's --traces and --reference write it)."""

from pathlib import Path

import dagster as dg

from rag_eval_pipeline.defs.resources.settings import SettingsResource
from rag_eval_pipeline.trajectories.reference import Task, read_reference
from rag_eval_pipeline.trajectories.settings import TrajectorySettings
from rag_eval_pipeline.trajectories.sources import read_traces
from rag_eval_pipeline.trajectories.traces import LocatedSpan


class TrajectorySourcesResource(dg.ConfigurableResource):
    """Reads every configured trace file (and Phoenix project) and the reference."""

    settings: SettingsResource

    @property
    def trajectories(self) -> TrajectorySettings:
        return self.settings.section("trajectories", "docs/trajectories.md")

    def read_spans(self) -> list[LocatedSpan]:
        return read_traces(self.trajectories)

    def read_tasks(self) -> list[Task]:
        if not self.trajectories.reference:
            raise ValueError("no reference: --reference FILE, or trajectories.reference in rag_eval.yaml")
        return read_reference(Path(self.trajectories.reference))
