"""Where `rag-eval probe` keeps its results: each model's latest probe rows, one parquet file per
model beside the instance's artifacts (not an asset of the evaluation: a probe never changes what
an evaluation reads). `rag-eval gate --max asr_*` and the report read them."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pandas as pd

from rag_eval_pipeline.answering.spec import check_name
from rag_eval_pipeline.instance.lineage import History, artifacts_folder

if TYPE_CHECKING:
    import dagster as dg

PROBES_FOLDER = "security_probes"


def store_probes(instance: dg.DagsterInstance | History, probes: pd.DataFrame) -> list[str]:
    """Each model's rows replace its previous probe results; the files written."""
    folder = artifacts_folder(instance) / PROBES_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for model, rows in probes.groupby("model", sort=True):
        path = folder / f"{check_name(str(model))}.parquet"
        path.write_bytes(rows.reset_index(drop=True).to_parquet(index=False))
        written.append(str(path))
    return written


def load_probes(instance: dg.DagsterInstance | History, model: str) -> pd.DataFrame | None:
    """The model's latest probe rows, None when it was never probed here."""
    path = artifacts_folder(instance) / PROBES_FOLDER / f"{check_name(model)}.parquet"
    if not path.exists():
        return None
    return pd.read_parquet(io.BytesIO(path.read_bytes()))
