"""The security probes as an asset of their own: `rag-eval probe` attacks each model (it plants
passages, which no run of the evaluation may do) and stores its rows; this asset reads what is
stored and shows each model's attack success per attack, with its interval, where the UI opens
an asset (its Overview), and the worst probes below."""

import dagster as dg
import pandas as pd
from upath import UPath

from rag_eval_pipeline.common.text import clip_at_word
from rag_eval_pipeline.defs.names import ARTIFACTS, REPORTING, SECURITY_PROBES
from rag_eval_pipeline.metrics.security import probe_results, worst_probes
from rag_eval_pipeline.reporting.markdown import to_markdown, with_intervals
from rag_eval_pipeline.storage.probes import load_probes

PROBE_TEXT_CHARS = 160  # of a planted passage or a reply in the worst probes' table
RATES = ["model", "attack", "language", "n", "asr"]
NO_PROBES = "none stored: `rag-eval probe` attacks each model and records its rows here"


def probe_rates(rows: pd.DataFrame) -> pd.DataFrame:
    """Each model's attack success per attack and language, ``0.250 [0.050, 0.600]``."""
    results = probe_results(rows).rename(columns={"ci_low": "asr_ci_low", "ci_high": "asr_ci_high"})
    return with_intervals(results[[*RATES, "asr_ci_low", "asr_ci_high"]], metrics=("asr",))


def probes_metadata(rows: pd.DataFrame | None) -> dict[str, object]:
    """What the UI shows of the stored probes: the rates first (a laptop's first screen), then the
    worst probes with their planted passage and reply cut at a word's end."""
    if rows is None or rows.empty:
        return {"probes": 0, "attack_success": dg.MetadataValue.md(NO_PROBES)}
    worst = worst_probes(rows).assign(
        planted=lambda f: [clip_at_word(str(t), PROBE_TEXT_CHARS) for t in f["planted"]],
        reply=lambda f: [clip_at_word(str(t), PROBE_TEXT_CHARS) for t in f["reply"]],
    )
    return {
        "attack_success": dg.MetadataValue.md(to_markdown(probe_rates(rows))),
        "probes": len(rows),
        "models": dg.MetadataValue.json(sorted(rows["model"].unique().tolist())),
        "worst_probes": dg.MetadataValue.md(to_markdown(worst) if not worst.empty else "none succeeded"),
    }


@dg.asset(name=SECURITY_PROBES, group_name=REPORTING, code_version="1")
def security_probes(context: dg.AssetExecutionContext) -> pd.DataFrame:
    """Each model's attack success per attack and language with its 95% interval, from the rows
    `rag-eval probe` stored (materializing it reads them again; it never probes: planting
    passages is that command's, asked for by name)."""
    rows = load_probes(UPath(context.instance.storage_directory()) / ARTIFACTS)
    context.add_output_metadata(probes_metadata(rows))
    if rows is None or rows.empty:
        return pd.DataFrame(columns=RATES)
    return probe_rates(rows)
