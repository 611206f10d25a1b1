"""Every metric summary ever materialized, for the trend in the report; and every judge's
agreement with people at each set of labels, for the calibration chart."""

import os
import shutil
from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.common.files import exclusive, way_back, write_atomically
from rag_eval_pipeline.defs.resources.settings import storage_folder
from rag_eval_pipeline.metrics.agreement import AGREEMENT_HISTORY_COLUMNS, upsert_agreement_history
from rag_eval_pipeline.reporting.monitoring import HISTORY_COLUMNS, upsert_history
from rag_eval_pipeline.storage.formats import CorruptArtifactError


class HistoryResource(dg.ConfigurableResource):
    """A parquet file of every summary's overall means (one row per judge and metric)."""

    path: str | None = Field(
        default=None, description="default: <DAGSTER_HOME>/storage/history/metric_history.parquet"
    )

    _file: Path = PrivateAttr()
    _agreement_file: Path = PrivateAttr()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._file = (
            Path(self.path) if self.path else storage_folder(context) / "history" / "metric_history.parquet"
        )
        self._agreement_file = self._file.with_name("agreement_history.parquet")

    def read_agreement(self) -> pd.DataFrame:
        return read_history(self._agreement_file, AGREEMENT_HISTORY_COLUMNS, "calibration chart")

    def record_agreement(self, rows: pd.DataFrame) -> int:
        """Records one set of labels' agreement (the same labels again replace their rows)."""
        with exclusive(self._agreement_file, "recording judge agreement"):
            history = upsert_agreement_history(self.read_agreement(), rows)
            rewrite_history(self._agreement_file, history)
        return len(history)

    def read(self) -> pd.DataFrame:
        return read_history(self._file, HISTORY_COLUMNS, "trend")

    def record(self, rows: pd.DataFrame) -> int:
        """Records one summary's rows, replacing an earlier record of the same summary run
        (idempotent), atomically (write aside, then rename); returns the history's length."""
        # two runs recording at once must not lose each other's rows
        with exclusive(self._file, "recording metric history"):
            history = upsert_history(self.read(), rows)
            rewrite_history(self._file, history)
        return len(history)


BACKUP_SUFFIX = ".previous"  # the history as it was before its last rewrite


def read_history(path: Path, columns: list[str], shown_as: str) -> pd.DataFrame:
    """A history file, or an empty one; a damaged file is one error naming it, what is lost and
    the copy it can be restored from (the version before the last rewrite)."""
    if not path.is_file():
        return pd.DataFrame(columns=columns)
    try:
        return pd.read_parquet(path)
    except Exception as err:  # truncated or overwritten
        anew = "delete it to start the history anew"
        restore = (
            "restore the version before its last rewrite (cp {backup} {path}: one summary's rows are lost)"
        )
        raise CorruptArtifactError(
            f"{path} is unreadable ({type(err).__name__}): it holds the report's {shown_as}; "
            f"{way_back(path, BACKUP_SUFFIX, f'{restore}, or {anew}', anew)} "
            "(every stored result stays)"
        ) from err


def rewrite_history(path: Path, history: pd.DataFrame) -> None:
    """The new history written aside and renamed into place, the old one kept beside it (a hard
    link: no copy) as what a damaged file is restored from."""
    previous = path.with_name(path.name + BACKUP_SUFFIX)
    if path.is_file():
        previous.unlink(missing_ok=True)
        try:
            os.link(path, previous)
        except OSError:  # links not allowed on this filesystem: a copy
            shutil.copyfile(path, previous)
    write_atomically(path, lambda tmp: history.to_parquet(tmp, index=False))
