"""Every metric summary ever materialized, for the trend in the report; and every judge's
agreement with people at each set of labels, for the calibration chart."""

from pathlib import Path

import dagster as dg
import pandas as pd
from pydantic import Field, PrivateAttr

from rag_eval_pipeline.defs.resources.settings import storage_folder
from rag_eval_pipeline.metrics.agreement import AGREEMENT_HISTORY_COLUMNS, upsert_agreement_history
from rag_eval_pipeline.reporting.monitoring import HISTORY_COLUMNS, upsert_history
from rag_eval_pipeline.storage.files import exclusive, write_atomically


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
        if self._agreement_file.is_file():
            return pd.read_parquet(self._agreement_file)
        return pd.DataFrame(columns=AGREEMENT_HISTORY_COLUMNS)

    def record_agreement(self, rows: pd.DataFrame) -> int:
        """Records one set of labels' agreement (the same labels again replace their rows)."""
        with exclusive(self._agreement_file):
            history = upsert_agreement_history(self.read_agreement(), rows)
            write_atomically(self._agreement_file, lambda tmp: history.to_parquet(tmp, index=False))
        return len(history)

    def read(self) -> pd.DataFrame:
        return pd.read_parquet(self._file) if self._file.is_file() else pd.DataFrame(columns=HISTORY_COLUMNS)

    def record(self, rows: pd.DataFrame) -> int:
        """Records one summary's rows, replacing an earlier record of the same summary run
        (idempotent), atomically (write aside, then rename); returns the history's length."""
        with exclusive(self._file):  # two runs recording at once must not lose each other's rows
            history = upsert_history(self.read(), rows)
            write_atomically(self._file, lambda tmp: history.to_parquet(tmp, index=False))
        return len(history)
