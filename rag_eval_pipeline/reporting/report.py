"""The evaluation report: one HTML file that opens offline (plotly.js beside it, written once per home)."""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from rag_eval_pipeline.judges.claims import claims_of
from rag_eval_pipeline.metrics.diagnosis import ALL_DIAGNOSES, DIAGNOSES
from rag_eval_pipeline.metrics.diff import SHOWN_COLUMNS
from rag_eval_pipeline.metrics.reliability import ALPHA_SUFFIX
from rag_eval_pipeline.metrics.schema import (
    AGREEMENT_FIGURES,
    DIAGNOSIS,
    answer_keys,
    case_key,
    per_answer,
    unstable_cases,
)
from rag_eval_pipeline.metrics.settings import OVERALL
from rag_eval_pipeline.metrics.stability import is_flip_column
from rag_eval_pipeline.metrics.summary import LANGUAGE_GROUP, language_breakdown
from rag_eval_pipeline.reporting.html import missing_charts_notice, plotly_script
from rag_eval_pipeline.reporting.images import images_html
from rag_eval_pipeline.reporting.knowledge_health import knowledge_health_html
from rag_eval_pipeline.reporting.markdown import with_intervals
from rag_eval_pipeline.reporting.security import security_html
from rag_eval_pipeline.reporting.simulation import SimulatedVersion, simulation_html

HEADLINE_METRICS = (
    "correctness",
    "faithfulness",
    "answer_rate",
    "context_relevance",
    "faithfulness_lexical",
    "f1",
    "context_recall",
)

_TABLE_SCRIPT = """
// the case table: rows of page 1 inline, the others loaded from scripts beside the report (or
// inlined in a single-file copy); caseIndex (case id -> [page, row] of each of its rows, built
// with the report) answers a search or "go to a case" without scanning the rows
const pageRows={},DEPTHS=['','../../','../../../'];let currentPage=1,shownTexts=null,pending=null;
function casesBody(){return document.querySelector('#cases tbody');}
function pageStatus(t){const s=document.getElementById('page-status');if(s)s.innerText=t;}
function render(rows){casesBody().innerHTML=rows.join('');shownTexts=null;}
// a row's text as shown (the folded passages left out), read once per rendering: no layout
function rowText(r){let t='';for(const c of r.cells)for(const n of c.childNodes)if(n.nodeName!=='DETAILS')t+=n.textContent+' ';return t.toLowerCase();}
function texts(){if(shownTexts===null)shownTexts=[...casesBody().rows].map(rowText);return shownTexts;}
function known(id){return Object.prototype.hasOwnProperty.call(caseIndex,id);}
function filterCases(){const raw=document.getElementById('case-filter').value.trim();
 if(raw&&known(raw)){goToCase(raw);return;}
 if(document.getElementById('cases').dataset.view==='case'){showPage(currentPage);return;}
 const q=raw.toLowerCase(),rows=casesBody().rows,t=texts();let shown=0;
 for(let i=0;i<rows.length;i++){const v=!q||t[i].includes(q);rows[i].hidden=!v;if(v)shown++;}
 document.getElementById('case-count').innerText=shown;}
function sortCases(col){const body=casesBody();const rows=[...body.rows];
 const th=document.querySelectorAll('#cases th')[col];const asc=th.dataset.dir!=='asc';th.dataset.dir=asc?'asc':'desc';
 const key=r=>r.cells[col].dataset.v??r.cells[col].textContent;
 const keyed=rows.map(r=>[key(r),r]);
 keyed.sort((a,b)=>{const nx=parseFloat(a[0]),ny=parseFloat(b[0]);const c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:a[0].localeCompare(b[0]);return asc?c:-c;});
 keyed.forEach(k=>body.appendChild(k[1]));shownTexts=null;}
function withPages(pages,then){const missing=pages.filter(n=>!pageRows[n]);
 if(!missing.length){then();return;}pending={pages:pages,then:then};missing.forEach(n=>loadPage(n,0));}
function loadPage(n,d){if(window.inlinePages&&inlinePages[n]){reportPage(n,inlinePages[n]);return;}
 const p=document.getElementById('case-pager');const s=document.createElement('script');
 s.src=DEPTHS[d]+p.dataset.folder+'/page-'+String(n).padStart(5,'0')+'.js';
 s.onerror=()=>{s.remove();if(d+1<DEPTHS.length)loadPage(n,d+1);
  else{pending=null;pageStatus('page '+n+' cannot be loaded: its file is not beside this report (`rag-eval report --single-file` writes a copy that carries every page)');}};
 pageStatus('loading page '+n+'...');document.head.appendChild(s);}
function reportPage(n,rows){pageRows[n]=rows;
 if(pending&&pending.pages.every(k=>pageRows[k])){const then=pending.then;pending=null;pageStatus('');then();}}
function showPage(n){const p=document.getElementById('case-pager');const pages=p?+p.dataset.pages:1;
 if(!(n>=1&&n<=pages))return;withPages([n],()=>{currentPage=n;render(pageRows[n]);
  document.getElementById('cases').dataset.view='page';
  if(p){document.getElementById('page-number').value=n;p.dataset.shown=n;}
  pageStatus('');filterCases();});}
function goToCase(id){id=id.trim();if(!id)return;const at=known(id)?caseIndex[id]:null;
 if(!at){pageStatus('no case '+id+' in this report');return;}
 const pages=[...new Set(at.map(e=>e[0]))];
 withPages(pages,()=>{render(at.map(e=>pageRows[e[0]][e[1]]));document.getElementById('cases').dataset.view='case';
  document.getElementById('case-count').innerText=at.length;document.getElementById('case-filter').value=id;
  const p=document.getElementById('case-pager');if(p)p.dataset.shown='case';
  pageStatus('case '+id+': its '+at.length+' row(s), every model and judge'+(p?' (from page '+pages.join(', ')+'; clear the filter to go back to page '+currentPage+')':''));});}
function jumpToCase(id){goToCase(id);}
document.addEventListener('DOMContentLoaded',()=>{const body=casesBody();if(!body)return;
 pageRows[1]=[...body.rows].map(r=>r.outerHTML);const n=document.getElementById('page-number');if(n)n.value=1;
 const f=document.getElementById('case-filter');if(f&&f.value)filterCases();});
"""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}h1{margin-bottom:0}
.note{color:#555;max-width:60rem}table{border-collapse:collapse;font-size:.85rem}
td,th{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top}th{background:#f4f4f4;cursor:pointer}
.gold{color:#1a7f37;font-weight:600}.flagged{color:#a11}input{padding:.4rem;width:24rem;margin:.5rem 0}
.wide{max-width:100%;overflow-x:auto}td{max-width:24rem;overflow-wrap:anywhere}
.plotly-graph-div{max-width:100%}.chart-missing{border:1px dashed #a11;padding:1rem;color:#a11}
"""


def _figure_html(figure: go.Figure) -> str:
    return figure.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False})


def score_chart(summaries: Mapping[str, pd.DataFrame]) -> go.Figure:
    """The Elastic LLM-as-a-judge article's chart: mean score per metric per model, with 95% interval whiskers."""
    figure = go.Figure()
    for model, summary in sorted(summaries.items()):
        overall = summary[(summary["group"] == OVERALL) & summary["metric"].isin(HEADLINE_METRICS)]
        for judge_id, rows in overall.groupby("judge_id"):
            rows = rows.dropna(subset=["mean"])
            figure.add_bar(
                name=f"{model} ({judge_id})",
                x=rows["metric"],
                y=rows["mean"],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": (rows["ci_high"] - rows["mean"]).fillna(0),
                    "arrayminus": (rows["mean"] - rows["ci_low"]).fillna(0),
                },
            )
    figure.update_layout(
        barmode="group",
        yaxis={"range": [0, 1.05], "title": "mean score"},
        title="Mean score per metric (95% interval)",
    )
    return figure


def distribution_chart(scores_by_model: Mapping[str, pd.DataFrame], metric: str = "correctness") -> go.Figure:
    figure = go.Figure()
    for model, scores in sorted(scores_by_model.items()):
        scores = per_answer(scores)  # a judge asked several times: its median per case
        for judge_id, rows in scores[scores["status"] == "ok"].groupby("judge_id"):
            if metric in rows and rows[metric].notna().any():
                figure.add_histogram(
                    name=f"{model} ({judge_id})", x=rows[metric].dropna(), xbins={"size": 0.25}
                )
    figure.update_layout(
        barmode="group", title=f"Distribution of {metric}", xaxis={"title": metric}, yaxis={"title": "cases"}
    )
    return figure


def diagnosis_chart(summaries: Mapping[str, pd.DataFrame]) -> go.Figure:
    figure = go.Figure()
    labels = []
    # a vision judge's diagnoses only where one diagnosed (metric_summary lists them then)
    shown = [
        d for d in ALL_DIAGNOSES if d in DIAGNOSES or any(d in set(s["metric"]) for s in summaries.values())
    ]
    counts: dict[str, list[float]] = {d: [] for d in shown}
    for model, summary in sorted(summaries.items()):
        rows = summary[summary["group"] == DIAGNOSIS]
        for judge_id, judge_rows in rows.groupby("judge_id"):
            labels.append(f"{model} ({judge_id})")
            totals = dict(zip(judge_rows["metric"], judge_rows["total"]))
            for d in shown:
                counts[d].append(totals.get(d, 0))
    for d in shown:
        figure.add_bar(name=d, x=labels, y=counts[d])
    figure.update_layout(
        barmode="stack", title="Where cases fail: diagnosis per model", yaxis={"title": "cases"}
    )
    return figure


def trend_chart(history: pd.DataFrame, metric: str = "correctness") -> go.Figure:
    figure = go.Figure()
    rows = history[history["metric"] == metric] if not history.empty else history
    for (model, judge_id), series in rows.groupby(["answer_model", "judge_id"]) if not rows.empty else []:
        figure.add_scatter(
            name=f"{model} ({judge_id})", x=series["materialized_at"], y=series["mean"], mode="lines+markers"
        )
    figure.update_layout(title=f"{metric} over time", yaxis={"range": [0, 1.05]})
    return figure


def _provenance(summary: pd.DataFrame) -> str:
    """The Dagster run that summarized a model and the index version it read, short."""
    run = str(summary["summary_run_id"].iloc[0])[:8] if "summary_run_id" in summary and len(summary) else "–"
    index = str(summary["kb_version"].iloc[0])[:12] if "kb_version" in summary and len(summary) else "–"
    return f"run {run} · index {index}"


def _passages_html(case: pd.Series, gold: set[str]) -> str:
    """The retrieved titles (gold in green) and, folded, the passages the model read."""
    titles = ", ".join(
        f'<span class="gold">{html.escape(t)}</span>' if t in gold else html.escape(t)
        for t in case["retrieved_titles"]
    )
    passages = "".join(
        f"<p><b>[{n}] {html.escape(str(t))}</b> {html.escape(str(p)[:PASSAGE_PREVIEW_CHARS])}</p>"
        for n, (t, p) in enumerate(zip(case["retrieved_titles"], case["retrieved_passages"]), start=1)
    )
    return f"{titles}<details><summary>passages</summary>{passages}</details>" if passages else titles


def _claims_html(row: Mapping) -> str:
    """A claim judge's claims under the answer, each unsupported one marked."""
    claims = claims_of(row.get("rationales")) if row.get("judge_kind") == "claims" else []
    items = "".join(
        f'<li class="claim">{html.escape(c["claim"])}</li>'
        if c["supported"]
        else f'<li class="claim unsupported"><mark>unsupported</mark> {html.escape(c["claim"])}</li>'
        for c in claims
    )
    return f'<ul class="claims">{items}</ul>' if items else ""


PASSAGE_PREVIEW_CHARS = 600
ANSWER_PREVIEW_CHARS = 1_000  # the report shows this much of an answer; explain shows all of it


def _preview(answer: object) -> str:
    text = str(answer)
    if len(text) <= ANSWER_PREVIEW_CHARS:
        return text
    return f"{text[:ANSWER_PREVIEW_CHARS]} [...{len(text) - ANSWER_PREVIEW_CHARS:,} more characters]"


CASE_HEAD = [
    "model",
    "judge",
    "qid",
    "question",
    "answer",
    "ground truth",
    "correctness",
    "faithfulness",
    "context relevance",
    "diagnosis",
    "retrieved (gold in green)",
    "run · index",
]
INLINE_CASE_ROWS = 2_000  # a report with more case rows pages them ...
PAGE_ROWS = 1_000  # ... this many a page, the first inline, the others loaded when asked for


@dataclass(frozen=True)
class RenderedReport:
    html: str
    pages: Mapping[str, str]  # the companion pages: path under the artifacts folder -> script


CaseKey = tuple[str, str, int, int]  # model, case id, row of its scores, row of its answers


@dataclass(frozen=True)
class _ModelCases:
    scores: pd.DataFrame  # one row per answer and judge (re-scores collapsed)
    answers: pd.DataFrame
    unstable: dict[tuple[str, int], list[str]]
    provenance: str


class CaseRows:
    """Every judged case as a table row: its question and answer as they were asked and answered
    (a stale partition may hold cases the current judgement list no longer has), the scores,
    and where they came from (run and index version). ``keys`` lists the rows; ``html`` makes
    those asked for, so a report of 100,000 cases never holds every row's HTML at once."""

    def __init__(
        self,
        scores_by_model: Mapping[str, pd.DataFrame],
        answers_by_model: Mapping[str, pd.DataFrame],
        judgement_list: pd.DataFrame,
        summaries: Mapping[str, pd.DataFrame] | None = None,
    ) -> None:
        # plain lookups: a .loc per case row cost half the report's time on 1,500 rows
        self._gold_of = dict(zip(judgement_list["qid"], judgement_list["gold_titles"]))
        self._truth_of = dict(zip(judgement_list["qid"], judgement_list["answer"]))
        self._models: dict[str, _ModelCases] = {}
        self.keys: list[CaseKey] = []
        for model, scores in sorted(scores_by_model.items()):
            answers = answers_by_model[model]
            cases = _ModelCases(
                per_answer(scores),
                answers,
                unstable_cases(scores),  # what flipped between a judge's re-scores, by answer
                _provenance((summaries or {}).get(model, pd.DataFrame())),
            )
            self._models[model] = cases
            answered = {
                case_key(a): n for n, a in enumerate(answers[answer_keys(answers)].to_dict("records"))
            }
            for n, row in enumerate(cases.scores[answer_keys(cases.scores)].to_dict("records")):
                if case_key(row) in answered:  # (a scored answer no longer stored is left out)
                    self.keys.append((model, str(row["qid"]), n, answered[case_key(row)]))

    def __len__(self) -> int:
        return len(self.keys)

    def html(self, keys: Sequence[CaseKey]) -> str:
        """The rows of ``keys``, in their order."""
        return "".join(self.row_list(keys))

    def row_list(self, keys: Sequence[CaseKey]) -> list[str]:
        """The rows of ``keys``, in their order, each its own HTML."""
        out = []
        for model, group in itertools.groupby(keys, key=lambda key: key[0]):
            group = list(group)
            cases = self._models[model]
            scores = cases.scores.iloc[[k[2] for k in group]].to_dict("records")
            answers = cases.answers.iloc[[k[3] for k in group]].to_dict("records")
            out += [self._row_html(model, cases, row, case) for row, case in zip(scores, answers)]
        return out

    def _row_html(self, model: str, cases: _ModelCases, row: dict, case: dict) -> str:
        known = row["qid"] in self._truth_of
        gold = set(self._gold_of[row["qid"]]) if known else set()
        faithfulness = row.get("faithfulness")
        if faithfulness is None or pd.isna(faithfulness):
            faithfulness = row.get("faithfulness_lexical")
        cells = [
            model,
            row["judge_id"],
            row["qid"],
            case["question"],
            _preview(case["answer"]),
            self._truth_of[row["qid"]] if known else "(not in the current judgement list)",
        ]
        numbers = [row.get("correctness"), faithfulness, row.get("context_relevance")]
        tds = [f"<td>{html.escape(str(c))}</td>" for c in cells]
        tds[4] = f"<td>{html.escape(str(cells[4]))}{_claims_html(row)}</td>"
        tds += [
            f'<td data-v="{"" if n is None or pd.isna(n) else n}">{"–" if n is None or pd.isna(n) else f"{n:.2f}"}</td>'
            for n in numbers
        ]
        flipped = [f for f in cases.unstable.get(case_key(row), []) if f.startswith(f"{row['judge_id']}/")]
        marker = f" · unstable ({', '.join(f.split('/', 1)[1] for f in flipped)})" if flipped else ""
        tds += [
            f"<td>{html.escape(str(row.get('diagnosis') or row['status']) + marker)}</td>",
            f"<td>{_passages_html(case, gold)}</td>",
            f"<td>{html.escape(cases.provenance)}</td>",
        ]
        return "<tr>" + "".join(tds) + "</tr>"


def case_index(pages: Sequence[Sequence[CaseKey]]) -> dict[str, list[list[int]]]:
    """Case id -> [page, row on that page] of each of its rows (every model and judge): what a
    search or "go to a case" reads, so neither scans the rows."""
    index: dict[str, list[list[int]]] = {}
    for number, page in enumerate(pages, start=1):
        for row, key in enumerate(page):
            index.setdefault(key[1], []).append([number, row])
    return index


def _table(rows_html: str, shown: int, index: Mapping[str, list[list[int]]], pager: str = "") -> str:
    header = "".join(f'<th onclick="sortCases({i})">{h}</th>' for i, h in enumerate(CASE_HEAD))
    # ASCII (\u escapes), and no "</" that could end the script early
    data = json.dumps(index, separators=(",", ":")).replace("</", "<\\/")
    return (
        '<input id="case-filter" placeholder="filter cases (a case id shows its every row; or model, '
        'question, diagnosis...)" oninput="filterCases()"> '
        f'<span><span id="case-count">{shown}</span> cases shown</span>{pager}'
        f'<span id="page-status" class="note"></span><script>const caseIndex={data};</script>'
        f'<div class="wide"><table id="cases"><thead><tr>{header}</tr></thead><tbody>{rows_html}</tbody></table></div>'
    )


def case_table(
    scores_by_model: Mapping[str, pd.DataFrame],
    answers_by_model: Mapping[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    summaries: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """Every judged case in one table (``CaseRows``), inline."""
    rows = CaseRows(scores_by_model, answers_by_model, judgement_list, summaries)
    return _table(rows.html(rows.keys), len(rows), case_index([rows.keys]))


class PageScripts(Mapping[str, str]):
    """The companion pages of a paged table, each script made when it is written: no page's
    rows are held once it is written (100 MB at 20,000 cases x 2 models, were they all)."""

    def __init__(self, folder: str, rows: CaseRows, pages: list[list[CaseKey]]) -> None:
        self._rows = rows
        self._pages = {f"{folder}/page-{n:05d}.js": (n, page) for n, page in enumerate(pages[1:], start=2)}

    def __getitem__(self, path: str) -> str:
        number, page = self._pages[path]
        # ASCII (\u escapes): a script is read in whatever charset the page or the server
        # assumes, and a Chinese question must come out as it went in either way
        return f"reportPage({number}, {json.dumps(self._rows.row_list(page))});\n"

    def __iter__(self) -> Iterator[str]:
        return iter(self._pages)

    def __len__(self) -> int:
        return len(self._pages)


def paged_case_table(rows: CaseRows, folder: str) -> tuple[str, Mapping[str, str]]:
    """Case rows too many for one file: sorted by model and case id and cut into pages of
    ``PAGE_ROWS``; the first page inline, the others as scripts under ``folder`` (relative to
    the artifacts folder) that the report loads when asked, from a file or the report server.
    The case index (``case_index``) goes inline, so any case id finds its rows on every page."""
    ordered = sorted(rows.keys, key=lambda key: (key[0], key[1]))
    pages = [ordered[start : start + PAGE_ROWS] for start in range(0, len(ordered), PAGE_ROWS)]
    pager = (
        f'<div id="case-pager" data-folder="{html.escape(folder)}" data-pages="{len(pages)}">'
        f"{len(ordered):,} case rows in {len(pages)} pages of {PAGE_ROWS:,} (by model, then case id; the "
        "filter and the sort act on the page shown, a case id on every page; `rag-eval worst` and "
        "`explain` on every case): "
        '<button id="page-previous" onclick="showPage(currentPage-1)">previous</button> '
        'page <input id="page-number" type="number" min="1" style="width:5rem" '
        'onchange="showPage(parseInt(this.value))"> of ' + str(len(pages)) + " "
        '<button id="page-next" onclick="showPage(currentPage+1)">next</button> '
        '<input id="case-jump" placeholder="go to a case id" style="width:16rem" '
        'onchange="jumpToCase(this.value)"> '
        "</div>"
    )
    return _table(rows.html(pages[0]), len(pages[0]), case_index(pages), pager), PageScripts(
        folder, rows, pages
    )


def case_languages(summaries: Mapping[str, pd.DataFrame]) -> dict[str, int]:
    """The cases' languages (detected, or set) and how many cases each, from the summaries'
    ``language=`` groups (the most any model saw): said even when there is one."""
    counts: dict[str, int] = {}
    for summary in summaries.values():
        grouped = summary[summary["group"].astype(str).str.startswith(LANGUAGE_GROUP)]
        for group, rows in grouped.groupby("group"):
            code = str(group)[len(LANGUAGE_GROUP) :]
            counts[code] = max(counts.get(code, 0), int(rows["n_cases"].max()))
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def _header_html(summaries: Mapping[str, pd.DataFrame], missing: Mapping[str, str]) -> str:
    """Which models, which languages: words, not a data structure."""
    models = ", ".join(html.escape(m) for m in sorted(summaries)) or "none evaluated yet"
    without = f" (without results: {', '.join(html.escape(m) for m in sorted(missing))})" if missing else ""
    languages = case_languages(summaries)
    said = "; ".join(f"{html.escape(code)} ({n:,} cases)" for code, n in languages.items())
    language = f"<br>language of the cases: <span id='case-languages'>{said}</span>" if said else ""
    return f"<p class='note' id='report-header'>answer models: {models}{without}{language}</p>"


def frame_html(frame: pd.DataFrame, float_format=lambda v: f"{v:.3f}") -> str:
    """A table as the report shows it: absent values as "–" (object columns' None too, which
    pandas' na_rep leaves as "None"), in a box that scrolls sideways rather than widening the page."""
    shown = frame.copy()
    for column in shown.select_dtypes(include="object").columns:
        shown[column] = shown[column].map(
            lambda v: "–" if v is None or (isinstance(v, float) and pd.isna(v)) else v
        )
    table = shown.to_html(index=False, float_format=float_format, na_rep="–")
    return f'<div class="wide">{table}</div>'


def _stale_html(stale: Mapping[str, list[str]]) -> str:
    items = "".join(
        f"<li><b>{html.escape(model)}</b>: {html.escape('; '.join(reasons))}</li>"
        for model, reasons in sorted(stale.items())
    )
    return f'<div id="stale" class="note"><h2>Stale results</h2><ul>{items}</ul></div>'


def _missing_html(missing: Mapping[str, str]) -> str:
    items = "".join(
        f"<li><b>{html.escape(model)}</b>: {html.escape(reason)}</li>"
        for model, reason in sorted(missing.items())
    )
    return (
        '<div id="missing" class="note"><h2>Models without results</h2><p>These answer models are '
        f"registered but have no results: every number below is over the other models.</p><ul>{items}</ul></div>"
    )


def _why_nothing_is_paired(models: int) -> str:
    if models == 0:
        return "no answer model has been evaluated yet"
    if models == 1:
        return "one model only: nothing to pair"
    return "no two models were scored by the same judge on the same cases"


def judge_validation_html(validation: pd.DataFrame | None) -> str:
    """Each LLM judge against the reference judge, pooled over the models, and on the
    calibration models: whether its scores can be trusted."""
    if validation is None or validation.empty:
        return "<p>No LLM judge ran beside the reference judge: nothing to validate.</p>"
    pooled = validation[validation["answer_model"] == "all models"]
    calibration = validation[validation["answer_model"] != "all models"]
    agreement = pooled[
        [
            "judge_id",
            "axis",
            "n",
            *AGREEMENT_FIGURES,
            "definitions_compared",
        ]
    ]
    flags = calibration[["judge_id", "answer_model", "judge_mean", "calibration_expected", "calibration_ok"]]
    return (
        '<p class="note">Agreement with the reference judge, pooled over every answer model: Cohen\'s '
        "kappa linearly weighted on the 0 / 0.5 / 1 scale, with a 95% bootstrap interval "
        "(undefined where one label on both sides leaves nothing to agree on beyond chance). "
        "Calibration: a sound judge gives the oracle about 1 and the null model about 0.</p>"
        + agreement.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
        + (flags.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–") if len(flags) else "")
    )


def judge_stability_html(summaries: Mapping[str, pd.DataFrame]) -> str:
    """Each re-scored judge's flip rates (the share of cases whose re-scores differ, with their
    interval) and a jury's agreement between its jurors, per model; empty when no judge was
    asked more than once and no jury sat."""
    rows = []
    for model, summary in sorted(summaries.items()):
        overall = summary[summary["group"] == OVERALL]
        steady = overall[overall["metric"].map(lambda m: is_flip_column(m) or m.endswith(ALPHA_SUFFIX))]
        for row in steady.itertuples():
            flip = is_flip_column(row.metric)
            rows.append(
                {
                    "model": model,
                    "judge": row.judge_id,
                    "figure": row.metric,
                    "value": _interval(row.mean, row.ci_low, row.ci_high) if flip else f"{row.mean:.3f}",
                    "cases": int(row.n),
                }
            )
    if not rows:
        return ""
    return (
        '<section id="judge-stability"><h2>How steady are the judges?</h2><p class="note">'
        "&lt;metric&gt;_flip_rate: the share of cases whose re-scores by the same judge are not all "
        "equal, with its 95% Clopper-Pearson interval (each case scores the median of its re-scores); "
        "&lt;metric&gt;_juror_alpha: Krippendorff's alpha (ordinal) between a jury's jurors (1: they "
        "always agree, 0: no better than chance). Cases that flipped are marked unstable below.</p>"
        + pd.DataFrame(rows).to_html(index=False, na_rep="–")
        + "</section>"
    )


def language_html(summaries: Mapping[str, pd.DataFrame]) -> str:
    """Each model's means per language, where the cases are in several: one language can fail
    while the overall mean hides it. Empty for a single language."""
    breakdown = language_breakdown(summaries)
    if breakdown.empty:
        return ""
    return (
        '<section id="by-language"><h2>By language</h2><p class="note">Each metric over the cases '
        "of one language (detected from the question and its reference, or set), with its 95% "
        "interval: exact match and F1 follow HotpotQA's definition in English and MLQA's in the "
        "others; each language's text is segmented and stemmed by its own analysis.</p>"
        + with_intervals(breakdown).to_html(index=False, na_rep="–")
        + "</section>"
    )


def _interval(mean: float, low: float, high: float) -> str:
    return "–" if pd.isna(mean) else f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def agreement_chart(history: pd.DataFrame) -> go.Figure:
    """Each judge's weighted kappa against people at every set of labels (calibration over time)."""
    figure = go.Figure()
    for (judge_id, metric), series in history.groupby(["judge_id", "metric"]) if not history.empty else []:
        series = series.sort_values("recorded_at")
        figure.add_scatter(
            name=f"{judge_id} / {metric}", x=series["recorded_at"], y=series["kappa"], mode="lines+markers"
        )
    figure.update_layout(
        title="agreement with people over time (weighted kappa)", yaxis={"range": [-0.05, 1.05]}
    )
    return figure


def human_review_html(
    agreement: pd.DataFrame | None,
    summaries: Mapping[str, pd.DataFrame],
    history: pd.DataFrame | None,
    corrections: pd.DataFrame | None = None,
) -> str:
    """Each judge against people (flagged below the bars), each model's judge mean beside the
    mean corrected by the labels (``corrections``, the cross-model ``corrected_means``), and
    the agreement over time."""
    if agreement is None or agreement.empty:
        return (
            "<p>No human labels yet: <code>rag-eval review export --model MODEL</code> writes a queue "
            "to label (README: Human review).</p>"
        )
    table = agreement.assign(
        kappa=[
            _interval(k, lo, hi) for k, lo, hi in agreement[["kappa", "kappa_low", "kappa_high"]].to_numpy()
        ],
        true_positive_rate=[
            _interval(r, lo, hi)
            for r, lo, hi in agreement[["true_positive_rate", "tpr_low", "tpr_high"]].to_numpy()
        ],
        true_negative_rate=[
            _interval(r, lo, hi)
            for r, lo, hi in agreement[["true_negative_rate", "tnr_low", "tnr_high"]].to_numpy()
        ],
    )[
        [
            "judge_id",
            "metric",
            "n",
            "accuracy",
            "kappa",
            "true_positive_rate",
            "true_negative_rate",
            "flagged",
            "why",
        ]
    ]
    rows = []
    labelled = (
        corrections[corrections["n_labels"] > 0] if corrections is not None and len(corrections) else None
    )
    for correction in labelled.to_dict(orient="records") if labelled is not None else []:
        summary = summaries.get(correction["answer_model"])
        if summary is None:
            continue
        overall = summary[
            (summary["group"] == OVERALL)
            & (summary["judge_id"] == correction["judge_id"])
            & (summary["metric"] == correction["metric"])
        ]
        for row in ({**r, **correction} for r in overall.to_dict(orient="records")):
            model = row["answer_model"]
            rows.append(
                {
                    "answer_model": model,
                    "judge_id": row["judge_id"],
                    "metric": row["metric"],
                    "judge mean": _interval(row["mean"], row["ci_low"], row["ci_high"]),
                    "corrected by people": _interval(
                        row["corrected_mean"], row["corrected_low"], row["corrected_high"]
                    ),
                    "labels": int(row["n_labels"]),
                    "cases": int(row["n"]),
                }
            )
    flagged = agreement[agreement["flagged"]]
    warning = (
        '<p class="flagged" id="flagged-judges"><b>Flagged:</b> '
        + "; ".join(
            html.escape(f"{r['judge_id']} / {r['metric']}: {r['why']}") for r in flagged.to_dict("records")
        )
        + ". Do not publish these judges' numbers unchecked.</p>"
        if len(flagged)
        else '<p id="flagged-judges">No judge is below the bars.</p>'
    )
    corrected = (
        pd.DataFrame(rows).to_html(index=False, na_rep="–")
        if rows
        else "<p>No model has two or more labelled cases on a metric: no corrected mean yet.</p>"
    )
    return (
        '<p class="note">Each judge\'s score of an answer against the label people gave it, pooled over '
        "every answer model: exact agreement, Cohen's kappa linearly weighted on the 0 / 0.5 / 1 scale "
        "(95% bootstrap interval), and for pass / fail at 0.5 the share of what people passed that the "
        "judge passed (true-positive rate) and of what they failed that it failed (true-negative rate), "
        "with exact intervals.</p>"
        + warning
        + table.to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
        + '<p class="note">Corrected means (prediction-powered inference): the judge\'s mean over every '
        "case plus the mean of people-minus-judge on the labelled cases, with a 95% interval from both "
        "parts. Unbiased when the labelled cases are a random sample (a <code>--strategy random</code> "
        "queue).</p>"
        + corrected
        + (_figure_html(agreement_chart(history)) if history is not None and not history.empty else "")
    )


def baseline_diffs_html(diffs: pd.DataFrame) -> str:
    """One block per baseline: against which run, whether any metric is significantly worse
    (Holm-adjusted), and the overall metric rows; a refused baseline says why."""
    blocks = ['<section id="baseline-diffs"><h2>Against the baselines</h2>']
    for name, rows in diffs.groupby("baseline", sort=True):
        first = rows.iloc[0]
        if isinstance(first["refused"], str) and first["refused"]:
            blocks.append(
                f"<h3>{html.escape(str(name))}</h3><p class='stale'>refused: {html.escape(first['refused'])}</p>"
            )
            continue
        overall = rows[rows["group"] == OVERALL]
        worse = rows[rows["worse"].astype(bool) & (rows["group"] == OVERALL)]  # what the gate fails on
        said = (
            "significantly worse: "
            + ", ".join(f"{j}/{m}" for j, m in zip(worse["judge_id"], worse["metric"]))
            if len(worse)
            else "no metric significantly worse"
        )
        blocks.append(
            f"<h3>{html.escape(str(name))}</h3><p class='note'>{html.escape(str(first['model']))}: run "
            f"{html.escape(str(first['after_run'])[:8])} against run {html.escape(str(first['before_run'])[:8])}; "
            f"{int(first['regressed_cases'])} case(s) regressed on some metric; <b class='verdict'>{html.escape(said)}</b> "
            "(`rag-eval diff` lists the cases)</p>"
            + overall[SHOWN_COLUMNS].to_html(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
        )
    return "".join(blocks) + "</section>"


def render_report(
    summaries: Mapping[str, pd.DataFrame],
    scores_by_model: Mapping[str, pd.DataFrame],
    answers_by_model: Mapping[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    history: pd.DataFrame,
    comparisons: pd.DataFrame,
    verdict_rule: str = "",
    stale: Mapping[str, list[str]] | None = None,
    validation: pd.DataFrame | None = None,
    agreement: pd.DataFrame | None = None,
    agreement_history: pd.DataFrame | None = None,
    diffs: pd.DataFrame | None = None,
    corrections: pd.DataFrame | None = None,
    missing: Mapping[str, str] | None = None,
    pages_folder: str | None = None,
    image_folder: str | None = None,
    security: pd.DataFrame | None = None,
    simulations: Mapping[str, SimulatedVersion] | None = None,
    kb_health: Mapping[str, dict] | None = None,
) -> RenderedReport:
    """The whole report as one HTML string (its case rows paged into files under
    ``pages_folder`` beyond ``INLINE_CASE_ROWS``); the models without results (``missing``, with why)
    and ``stale`` ones (model -> reasons) are shown first, so partial results read as partial
    and numbers computed on other questions or another index are never read as current; then
    each baseline's diff (``diffs``, when a baseline is pinned)."""
    rows = CaseRows(scores_by_model, answers_by_model, judgement_list, summaries)
    pages: Mapping[str, str] = {}
    if pages_folder is not None and len(rows) > INLINE_CASE_ROWS:
        cases, pages = paged_case_table(rows, pages_folder)
    else:
        cases = _table(rows.html(rows.keys), len(rows), case_index([rows.keys]))
    sections = [_missing_html(missing)] if missing else []
    sections += [_stale_html(stale or {})] if stale else []
    sections += [baseline_diffs_html(diffs)] if diffs is not None and not diffs.empty else []
    sections += [
        "<h2>Scores</h2>",
        '<p class="note">Each bar is a mean over the scored cases; the whisker is its 95% interval '
        "(method in metric_summary's ci_method; Clopper-Pearson by default, which keeps its width on "
        "small samples). Overlapping whiskers do not decide a comparison: the paired table does.</p>",
        _figure_html(score_chart(summaries)),
        _figure_html(distribution_chart(scores_by_model)),
        language_html(summaries),
        images_html(summaries, answers_by_model, judgement_list, image_folder),  # reporting/images.py
        "<h2>Where it fails</h2>",
        _figure_html(diagnosis_chart(summaries)),
        "<h2>Paired comparison</h2>",
        f'<p class="note" id="verdict-rule">{html.escape(verdict_rule)}</p>' if verdict_rule else "",
        frame_html(comparisons)
        if not comparisons.empty
        else f"<p>{_why_nothing_is_paired(len(summaries))}</p>",
        security_html(security),
        simulation_html(simulations or {}),  # reporting/simulation.py: empty when nothing was simulated
        knowledge_health_html(kb_health),  # reporting/knowledge_health.py: empty without kb_health
        '<h2 id="judge-validation">Can the judges be trusted?</h2>',
        judge_validation_html(validation),
        judge_stability_html(summaries),
        '<section id="human-review"><h2>Judges against people</h2>'
        + human_review_html(agreement, summaries, agreement_history, corrections)
        + "</section>",
        "<h2>Trend</h2>",
        _figure_html(trend_chart(history)),
        "<h2>Cases</h2>",
        cases,
    ]
    document = (
        "<!doctype html><html><head><meta charset='utf-8'><title>RAG evaluation report</title>"
        f"<style>{_STYLE}</style>{plotly_script()}<script>{_TABLE_SCRIPT}</script></head><body>"
        f"<h1>RAG evaluation report</h1>{_header_html(summaries, missing or {})}"
        + "".join(sections)
        + missing_charts_notice()
        + "</body></html>"
    )
    return RenderedReport(document, pages)
