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
from rag_eval_pipeline.reporting.markdown import with_intervals
from rag_eval_pipeline.storage.probes import load_probes

# the worst probes' table fits the Overview's pane at 1,440 px beside the rates (a table cell
# does not wrap): the case id, what the detector found and the reply cut short at a word's end;
# each planted passage in full is the report's and `rag-eval probe`'s
CASE_ID_CHARS = 8
FOUND_CHARS = 24
REPLY_CHARS = 32
RATES = ["model", "attack", "language", "n", "asr"]
NO_PROBES = "none stored: `rag-eval probe` attacks each model and records its rows here"


def probe_rates(rows: pd.DataFrame) -> pd.DataFrame:
    """Each model's attack success per attack and language, ``0.250 [0.050, 0.600]``."""
    results = probe_results(rows).rename(columns={"ci_low": "asr_ci_low", "ci_high": "asr_ci_high"})
    return with_intervals(results[[*RATES, "asr_ci_low", "asr_ci_high"]], metrics=("asr",))


def probes_metadata(rows: pd.DataFrame | None) -> dict[str, object]:
    """What the UI shows of the stored probes: the rates first (a laptop's first screen), then the
    worst probes in short rows."""
    if rows is None or rows.empty:
        return {"probes": 0, "attack_success": dg.MetadataValue.md(NO_PROBES)}
    worst = worst_probes_table(worst_probes(rows))
    return {
        "attack_success": rates_table(rows),
        "probes": len(rows),
        "models": dg.MetadataValue.json(sorted(rows["model"].unique().tolist())),
        "worst_probes": worst if worst is not None else dg.MetadataValue.md("none succeeded"),
    }


def rates_table(rows: pd.DataFrame) -> dg.TableMetadataValue:
    """The attack success as a row per model (and language, where several were probed) with a
    column per attack, ``0.25 [0.05, 0.60]``, and the probes per attack (``n``; said in the cell
    where an attack had fewer): every model's rates on the Overview's first screen at 1,440 x 900."""
    rates = probe_results(rows)
    several = rates["language"].nunique() > 1
    attacks = list(dict.fromkeys(rows["attack"]))  # in the order they were probed
    records = []
    for (model, language), rated in rates.groupby(["model", "language"], sort=True):
        by_attack = {str(rate["attack"]): rate for rate in rated.to_dict(orient="records")}
        most = int(rated["n"].max())
        cells = {
            attack: (
                f"{rate['asr']:.2f} [{rate['ci_low']:.2f}, {rate['ci_high']:.2f}]"
                + (f" of {int(rate['n'])}" if int(rate["n"]) < most else "")
                if (rate := by_attack.get(attack)) is not None
                else "not probed"
            )
            for attack in attacks
        }
        records.append(
            dg.TableRecord(
                {"model": str(model), **({"language": str(language)} if several else {}), "n": most, **cells}
            )
        )
    columns = [dg.TableColumn(name, "int" if name == "n" else "string") for name in records[0].data]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def worst_probes_table(worst: pd.DataFrame) -> dg.TableMetadataValue | None:
    """The probes that succeeded as short rows: model, attack, case, the evidence the detector
    found (the planted answer or the canary) and the reply, each text cut at a word's end."""
    if worst.empty:
        return None
    records = [
        dg.TableRecord(
            {
                "model": str(probe["model"]),
                "attack": str(probe["attack"]),
                "case": clip_at_word(str(probe["qid"]), CASE_ID_CHARS),
                "found": clip_at_word(_text(probe["evidence"]), FOUND_CHARS),
                "reply": clip_at_word(str(probe["reply"]), REPLY_CHARS),
            }
        )
        for probe in worst.to_dict(orient="records")
    ]
    columns = [dg.TableColumn(name, "string") for name in records[0].data]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def _text(value: object) -> str:
    """A stored text cell as shown: "–" where nothing was recorded."""
    absent = value is None or value == "" or (isinstance(value, float) and pd.isna(value))
    return "–" if absent else str(value)


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
