"""Where `rag-eval probe` keeps its results: each model's latest probe rows, one parquet file per
model in ``<artifacts>/security_probes`` (not an asset of the evaluation: a probe never changes
what an evaluation reads). `rag-eval gate --max asr_*` and the report read them."""

from __future__ import annotations

import io

import pandas as pd
from upath import UPath

PROBES_FOLDER = "security_probes"


def store_probes(artifacts: UPath, probes: pd.DataFrame) -> list[str]:
    """Each model's rows replace its previous probe results; the files written."""
    folder = artifacts / PROBES_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for model, rows in probes.groupby("model", sort=True):
        path = folder / f"{model}.parquet"  # a model name is a checked partition key: no path in it
        path.write_bytes(rows.reset_index(drop=True).to_parquet(index=False))
        written.append(str(path))
    return written


def load_probes(artifacts: UPath, model: str | None = None) -> pd.DataFrame | None:
    """The latest probe rows of ``model`` (of every model probed, when None); None when none."""
    folder = artifacts / PROBES_FOLDER
    paths = [folder / f"{model}.parquet"] if model is not None else sorted(folder.glob("*.parquet"))
    frames = [pd.read_parquet(io.BytesIO(p.read_bytes())) for p in paths if p.exists()]
    return pd.concat(frames, ignore_index=True) if frames else None
