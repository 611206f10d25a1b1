"""The evaluation report: one HTML file that opens offline (plotly.js beside it, written once per home)."""

from __future__ import annotations

import html
import itertools
import json
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import plotly.graph_objects as go

from rag_eval_pipeline.judges.claims import claims_of
from rag_eval_pipeline.metrics.comparison import unpaired_notes
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
from rag_eval_pipeline.metrics.summary import (
    ABSENT_COUNTS,
    LANGUAGE_GROUP,
    absent_part,
    case_absence,
    language_breakdown,
    scored_of,
)
from rag_eval_pipeline.reporting.charts import model_colours
from rag_eval_pipeline.reporting.html import lazy_plotly_script
from rag_eval_pipeline.reporting.images import ImageSection, images_html
from rag_eval_pipeline.reporting.knowledge_health import knowledge_health_html
from rag_eval_pipeline.reporting.markdown import with_intervals
from rag_eval_pipeline.reporting.monitoring import MEAN_COLUMNS
from rag_eval_pipeline.reporting.security import security_html
from rag_eval_pipeline.reporting.simulation import SimulatedVersion, simulation_html
from rag_eval_pipeline.reporting.svg import GREY, Interval, interval_rows, stacked_bars

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
// The case table, driven by caseData (built with the report: every row's model, judge, case id,
// question and scores, in columns): filtering, sorting and paging act on every row of every
// page through it, and a view shows VIEW_ROWS rows at a time. A row's full record (answer,
// reference, passages, claims, provenance) is HTML kept aside: page 1's in a <template>, the
// others' in scripts beside the report (or inlined in a single-file copy), read when opened.
const VIEW_ROWS=100,DEPTHS=['','../../','../../../'],pageRows={};
let view=null,viewPage=0,sortCol=-1,sortAsc=true,pending=null,lowered=null,filterTimer=0,caseMode=null;
function D(){return window.caseData;}
function pageStatus(t){const s=document.getElementById('page-status');if(s)s.innerText=t;}
function esc(t){return String(t).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function fmt(v){return v===null||v===undefined?'–':v.toFixed(2);}
// lower-cased names and ids, made once at the first search (not at load)
function lows(){if(lowered)return lowered;const d=D();const byId=new Map();
 d.qids.forEach((q,i)=>byId.set(q.toLowerCase(),i));
 lowered={models:d.models.map(s=>s.toLowerCase()),judges:d.judges.map(s=>s.toLowerCase()),
  diag:d.diagnoses.map(s=>s.toLowerCase()),qids:d.qids.map(s=>s.toLowerCase()),byId:byId,questions:null};
 return lowered;}
function allRows(){const n=D().m.length,v=new Int32Array(n);for(let i=0;i<n;i++)v[i]=i;return v;}
// the rows a query keeps: a model, judge or diagnosis it names a part of, a case id it begins,
// or a question it is in; sets of names and ids first, then one pass over the rows' codes
function matching(q){const d=D(),l=lows(),n=d.m.length;
 const ms=new Uint8Array(d.models.length),js=new Uint8Array(d.judges.length),ds=new Uint8Array(d.diagnoses.length);
 l.models.forEach((s,i)=>{if(s.includes(q))ms[i]=1;});l.judges.forEach((s,i)=>{if(s.includes(q))js[i]=1;});
 l.diag.forEach((s,i)=>{if(s.includes(q))ds[i]=1;});
 const qs=new Uint8Array(d.qids.length);
 // case ids are sorted: those that begin with q are one run, found by bisection
 let lo=0,hi=l.qids.length;while(lo<hi){const mid=(lo+hi)>>1;if(l.qids[mid]<q)lo=mid+1;else hi=mid;}
 for(let i=lo;i<l.qids.length&&l.qids[i].startsWith(q);i++)qs[i]=1;
 if(q.length>=3){if(!l.questions)l.questions=d.questions.map(s=>s.toLowerCase());
  l.questions.forEach((s,i)=>{if(s.includes(q))qs[i]=1;});}
 const out=new Int32Array(n);let k=0;
 for(let i=0;i<n;i++)if(ms[d.m[i]]||js[d.j[i]]||ds[d.d[i]]||qs[d.q[i]])out[k++]=i;
 return out.subarray(0,k);}
// a text column sorts by each value's rank among its column's values (made once a column)
const ranks={};
function rankOf(values){const o=values.map((s,i)=>i).sort((a,b)=>values[a].localeCompare(values[b]));
 const r=new Int32Array(o.length);o.forEach((x,k)=>r[x]=k);return r;}
function sortKey(col){const d=D();
 if(col===0)return i=>d.m[i];if(col===2)return i=>d.q[i];  // models and case ids are sorted already
 if(col===1){const r=ranks[1]||(ranks[1]=rankOf(d.judges));return i=>r[d.j[i]];}
 if(col===3){const r=ranks[3]||(ranks[3]=rankOf(d.questions));return i=>r[d.q[i]];}
 if(col===7){const r=ranks[7]||(ranks[7]=rankOf(d.diagnoses));return i=>r[d.d[i]];}
 const a=[d.c,d.f,d.r][col-4];return i=>a[i];}
// one native numeric sort of keys that carry their row's place (key * 2^k + place): no
// comparator called per pair, ties in the rows' order, absent ("–") last either way
function sorted(rows){if(sortCol<0)return rows;const key=sortKey(sortCol),n=rows.length,score=sortCol>=4&&sortCol<=6;
 const keys=new Float64Array(n),P=2**Math.ceil(Math.log2(n+1));  // room for every place
 for(let k=0;k<n;k++){const v=key(rows[k]);let r;
  if(score)r=v===null?3e6:Math.min(Math.max(Math.round(v*10000)+1e6,0),2e6);else r=v;
  if(!(score&&v===null)&&!sortAsc)r=2e6-r;
  keys[k]=r*P+k;}
 keys.sort();const out=new Int32Array(n);for(let k=0;k<n;k++)out[k]=rows[keys[k]%P];return out;}
// an absent correctness says why on hover (the index's sparse map of rows to reasons)
function absentTitle(i){const d=D(),a=d.a&&d.a[i];return a===undefined||a===null?'':' title="'+esc(d.absences[a])+'"';}
function rowHtml(i){const d=D(),m=d.models[d.m[i]],j=d.judges[d.j[i]],q=d.qids[d.q[i]],t=d.questions[d.q[i]],g=d.diagnoses[d.d[i]];
 return '<tr data-row="'+i+'"><td class="k" title="'+esc(m)+'">'+esc(m)+'</td><td class="k" title="'+esc(j)+'">'+esc(j)+
 '</td><td class="k" title="'+esc(q)+'">'+esc(q)+'</td><td class="k" title="'+esc(t)+'">'+esc(t)+'</td><td class="n"'+absentTitle(i)+'>'+fmt(d.c[i])+
 '</td><td class="n">'+fmt(d.f[i])+'</td><td class="n">'+fmt(d.r[i])+'</td><td class="k" title="'+esc(g)+'">'+esc(g)+
 '</td><td class="k"><button class="open" onclick="toggleRow(this)">open</button></td></tr>';}
window.caseRenders=0;  // how often the table was drawn (what a timing waits for)
function render(){window.caseRenders++;const body=document.querySelector('#cases tbody');const rows=view||allRows();
 const pages=Math.max(1,Math.ceil(rows.length/VIEW_ROWS));viewPage=Math.min(Math.max(viewPage,0),pages-1);
 const start=viewPage*VIEW_ROWS,shown=rows.subarray(start,start+VIEW_ROWS);let h='';
 for(let k=0;k<shown.length;k++)h+=rowHtml(shown[k]);body.innerHTML=h;
 document.getElementById('case-count').innerText=rows.length.toLocaleString('en');
 const p=document.getElementById('case-pager');p.dataset.shown=caseMode?'case':String(viewPage+1);p.dataset.pages=pages;
 document.getElementById('page-number').value=viewPage+1;document.getElementById('page-total').innerText=pages;}
function showPage(n){viewPage=n-1;render();}
function refilter(){const raw=document.getElementById('case-filter').value.trim(),q=raw.toLowerCase();caseMode=null;
 if(!q){view=sortCol<0?null:sorted(allRows());viewPage=0;render();pageStatus('');return;}
 const id=lows().byId.get(q);if(id!==undefined){goToCase(D().qids[id]);return;}
 view=sorted(matching(q));viewPage=0;render();pageStatus('');}
// each keystroke waits for the next: one search when typing stops
function filterCases(){clearTimeout(filterTimer);filterTimer=setTimeout(refilter,80);}
// a first click sorts up (the lowest scores, the worst cases, first), the next down
function sortCases(col){if(col>7)return;if(sortCol===col)sortAsc=!sortAsc;else{sortCol=col;sortAsc=true;}
 document.querySelectorAll('#cases th').forEach((th,k)=>{th.dataset.dir=k===col?(sortAsc?'asc':'desc'):'';});
 view=sorted(view||allRows());viewPage=0;render();}
function goToCase(id){id=String(id).trim();if(!id)return;const at=lows().byId.get(id.toLowerCase());
 if(at===undefined){pageStatus('no case '+id+' in this report');return;}
 const d=D(),real=d.qids[at],out=[];for(let i=0;i<d.q.length;i++)if(d.q[i]===at)out.push(i);
 view=Int32Array.from(out);viewPage=0;caseMode=real;render();
 document.getElementById('case-filter').value=real;
 pageStatus('case '+real+': its '+out.length+' row(s), every model and judge (clear the filter to see every case)');}
function jumpToCase(id){goToCase(id);}
// a row's full record, from the page that holds it
function withPage(n,then){if(pageRows[n]){then();return;}
 if(n===1){const t=document.getElementById('case-rows');pageRows[1]=t?[...t.content.querySelectorAll('tr')].map(r=>r.outerHTML):[];then();return;}
 pending={page:n,then:then};loadPage(n,0);}
function loadPage(n,d){if(window.inlinePages&&inlinePages[n]){reportPage(n,inlinePages[n]);return;}
 const s=document.createElement('script');s.src=DEPTHS[d]+D().folder+'/page-'+String(n).padStart(5,'0')+'.js';
 s.onerror=()=>{s.remove();if(d+1<DEPTHS.length)loadPage(n,d+1);
  else{pending=null;pageStatus('page '+n+' of case records cannot be loaded: its file is not beside this report (`rag-eval report --single-file` writes a copy that carries every page)');}};
 pageStatus('loading the record...');document.head.appendChild(s);}
function reportPage(n,rows){pageRows[n]=rows;if(pending&&pending.page===n){const t=pending.then;pending=null;pageStatus('');t();}}
function toggleRow(button){const tr=button.closest('tr'),next=tr.nextElementSibling;
 if(next&&next.classList.contains('record')){next.remove();button.innerText='open';return;}
 const i=+tr.dataset.row,per=D().pageRows,n=Math.floor(i/per)+1;
 withPage(n,()=>{const t=document.createElement('template');t.innerHTML='<table><tbody>'+pageRows[n][i%per]+'</tbody></table>';
  const cells=t.content.querySelectorAll('td'),head=D().head;let h='<dl>';
  cells.forEach((c,k)=>{h+='<dt>'+esc(head[k])+'</dt><dd>'+c.innerHTML+'</dd>';});
  const r=document.createElement('tr');r.className='record';r.innerHTML='<td colspan="9">'+h+'</dl></td>';
  tr.after(r);button.innerText='close';});}
document.addEventListener('DOMContentLoaded',()=>{if(!document.getElementById('cases')||!window.caseData)return;
 const f=document.getElementById('case-filter');if(f&&f.value)refilter();else render();performance.mark('cases-ready');
 // the search's lower-cased names, ids and questions, made when the page is idle, not on the first keystroke
 const warm=()=>{const l=lows();if(!l.questions)l.questions=D().questions.map(s=>s.toLowerCase());};
 window.requestIdleCallback?requestIdleCallback(warm,{timeout:2000}):setTimeout(warm,500);});
// what every table of the report does once laid out: a table wider than its pane is laid out
// fixed to the pane's width (cells cut with an ellipsis), and a cut cell shows its whole value
// on hover; tables inside a folded <details> are measured when it opens
function fitTables(root){root.querySelectorAll('table:not(#cases)').forEach(t=>{if(!t.offsetWidth)return;
 const pane=t.parentElement.clientWidth;if(t.offsetWidth>pane)t.classList.add('fit');
 t.querySelectorAll('td,th').forEach(c=>{if(!c.title&&c.scrollWidth>c.clientWidth)c.title=c.textContent;});});}
document.addEventListener('DOMContentLoaded',()=>{fitTables(document);
 document.querySelectorAll('details').forEach(d=>d.addEventListener('toggle',()=>{if(d.open)fitTables(d);}));});
// an image beside the report: the report may be a kept copy two or three folders down
function imageFallback(im){const src=im.dataset.src||im.getAttribute('href');im.dataset.src=src;
 const d=+(im.dataset.depth||0)+1;im.dataset.depth=d;
 if(d<DEPTHS.length){im.setAttribute('href',DEPTHS[d]+src);return;}
 im.removeAttribute('href');const f=im.closest('figure');if(f&&!f.querySelector('.image-missing')){
  const p=document.createElement('p');p.className='image-missing note';
  p.textContent='image not shown: '+src+' is not beside this report (`rag-eval report --single-file` writes a copy that carries every image); its boxes are drawn without it.';
  f.insertBefore(p,f.querySelector('svg'));}}
// charts further down: plotly.js (megabytes) is read only when one comes near the screen, or
// once the page has been idle a while, so it never holds the first screen or a click back
let plotlyState=0,plotlyWaiting=[];
function withPlotly(then){if(window.Plotly){then();return;}plotlyWaiting.push(then);if(plotlyState)return;plotlyState=1;
 const src=document.getElementById('plotly-source');
 if(src){const s=document.createElement('script');s.textContent=src.textContent;document.head.appendChild(s);plotlyReady();return;}
 tryPlotly(0);}
function tryPlotly(d){const s=document.createElement('script');s.src=DEPTHS[d]+PLOTLY_FILE;s.onload=plotlyReady;
 s.onerror=()=>{s.remove();if(d+1<DEPTHS.length)tryPlotly(d+1);else chartsMissing();};document.head.appendChild(s);}
function plotlyReady(){const w=plotlyWaiting;plotlyWaiting=[];w.forEach(f=>f());}
function chartsMissing(){plotlyWaiting=[];document.querySelectorAll('.lazy-chart').forEach(d=>{if(d.dataset.drawn==='2')return;
 const p=document.createElement('p');p.className='chart-missing note';p.textContent=CHART_MISSING;d.replaceWith(p);});}
function drawChart(div){if(div.dataset.drawn)return;div.dataset.drawn='1';
 withPlotly(()=>{const f=JSON.parse(div.dataset.figure);div.innerHTML='';div.dataset.drawn='2';
  Plotly.newPlot(div,f.data,f.layout,{displaylogo:false,responsive:true});});}
document.addEventListener('DOMContentLoaded',()=>{const charts=document.querySelectorAll('.lazy-chart');if(!charts.length)return;
 const seen=new IntersectionObserver(es=>es.forEach(e=>{if(e.isIntersecting){seen.unobserve(e.target);drawChart(e.target);}}),{rootMargin:'400px'});
 charts.forEach(c=>seen.observe(c));
 const idle=()=>charts.forEach(drawChart);
 setTimeout(()=>window.requestIdleCallback?requestIdleCallback(idle,{timeout:4000}):idle(),2500);});
// the metric the first screen shows, picked once for its pictures
function pickMetric(metric){document.querySelectorAll('[data-metric]').forEach(e=>{e.hidden=e.dataset.metric!==metric;});}
"""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}h1{margin-bottom:0}
.note{color:#555;max-width:60rem}table{border-collapse:collapse;font-size:.85rem;max-width:100%}
td,th{border:1px solid #ddd;padding:.25rem .45rem;vertical-align:top;text-align:left;white-space:nowrap;
 overflow:hidden;text-overflow:ellipsis;max-width:16rem}th{background:#f4f4f4}
table.fit{table-layout:fixed;width:100%}table.fit td,table.fit th{max-width:none}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.gold{color:#1a7f37;font-weight:600}.flagged{color:#a11}input{padding:.4rem;margin:.3rem 0}
#case-filter{width:22rem}.wide{max-width:100%;overflow-x:auto}
#cases{table-layout:fixed;width:100%}#cases th{cursor:pointer}#cases th[data-dir=asc]::after{content:" \\25B2"}
#cases th[data-dir=desc]::after{content:" \\25BC"}#cases td,#cases th{max-width:none}
#cases tr.record>td{white-space:normal;overflow-wrap:break-word;background:#fafafa}
#cases dl{display:grid;grid-template-columns:11rem 1fr;gap:.2rem .8rem;margin:.3rem 0}#cases dt{font-weight:600}
#cases dd{margin:0;overflow-wrap:break-word}button.open{font-size:.75rem;padding:0 .4rem}
.plotly-graph-div{max-width:100%}.chart-missing,.image-missing{border:1px dashed #a11;padding:1rem;color:#a11}
figure.overlay svg{max-width:100%;height:auto;display:block}figure.overlay{margin:1rem 0}
section{max-width:100%}details>summary{cursor:pointer;margin:.4rem 0}a.csv{font-size:.85rem;margin-left:.6rem}
.answers{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1.5rem}
.answers[hidden]{display:none}.answers>div{min-width:0}svg.chart{width:100%;height:auto;max-width:46rem;display:block}
"""


def _figure_html(figure: go.Figure) -> str:
    """A plotly chart drawn when it comes near the screen (plotly.js read then, not at load). Its
    place keeps the drawn chart's height from the start (plotly's 450 px unless the figure says),
    so nothing below moves under a reader's click when charts are drawn."""
    height = figure.layout.height or 450
    return (
        f'<div class="lazy-chart plotly-graph-div" style="min-height:{height}px" '
        f'data-figure="{html.escape(figure.to_json())}">'
        '<p class="note">chart: drawn when scrolled to</p></div>'
    )


def _colour(colours: Mapping[str, str] | None, model: str) -> str | None:
    return (colours or {}).get(model)


# a model's judges told apart by the bars' pattern, its colour kept
_PATTERNS = ("", "/", ".", "x", "-", "+")


def distribution_chart(
    scores_by_model: Mapping[str, pd.DataFrame],
    metric: str = "correctness",
    colours: Mapping[str, str] | None = None,
) -> go.Figure:
    figure = go.Figure()
    for model, scores in sorted(scores_by_model.items()):
        scores = per_answer(scores)  # a judge asked several times: its median per case
        for n, (judge_id, rows) in enumerate(scores[scores["status"] == "ok"].groupby("judge_id")):
            if metric in rows and rows[metric].notna().any():
                figure.add_histogram(
                    name=f"{model} ({judge_id})",
                    x=rows[metric].dropna(),
                    xbins={"size": 0.25},
                    marker={
                        "color": _colour(colours, model),
                        "pattern": {"shape": _PATTERNS[n % len(_PATTERNS)]},
                    },
                )
    figure.update_layout(
        barmode="group", title=f"Distribution of {metric}", xaxis={"title": metric}, yaxis={"title": "cases"}
    )
    return figure


# a colour per diagnosis: ok in green, the failures warm, an image's in purple
DIAGNOSIS_COLOURS = {
    "ok": "#59a14f",
    "retrieval_miss": "#e15759",
    "reasoning_error": "#f28e2b",
    "hallucination": "#b6262b",
    "unsupported_words": "#edc948",
    "parametric_answer": "#76b7b2",
    "image_contradiction": "#b07aa1",
}


def diagnosis_svg(summaries: Mapping[str, pd.DataFrame]) -> str:
    """Each model's cases by diagnosis (where the pipeline failed: retrieval, reasoning, grounding),
    one bar per model and judge."""
    # a vision judge's diagnoses only where one diagnosed (metric_summary lists them then)
    shown = [
        d for d in ALL_DIAGNOSES if d in DIAGNOSES or any(d in set(s["metric"]) for s in summaries.values())
    ]
    labels: list[str] = []
    counts: dict[str, list[float]] = {d: [] for d in shown}
    for model, summary in sorted(summaries.items()):
        rows = summary[summary["group"] == DIAGNOSIS]
        for judge_id, judge_rows in rows.groupby("judge_id"):
            labels.append(f"{model} ({judge_id})")
            totals = dict(zip(judge_rows["metric"], judge_rows["total"]))
            for d in shown:
                value = totals.get(d, 0)
                counts[d].append(0.0 if value is None or pd.isna(value) else float(value))
    if not labels:
        return "<p>No case has a diagnosis yet.</p>"
    colours = {d: DIAGNOSIS_COLOURS.get(d, "#9c755f") for d in shown}
    return stacked_bars(labels, counts, colours, "Where cases fail: diagnosis per model")


def trend_chart(
    history: pd.DataFrame, metric: str = "correctness", colours: Mapping[str, str] | None = None
) -> go.Figure:
    figure = go.Figure()
    rows = history[history["metric"] == metric] if not history.empty else history
    for (model, judge_id), series in rows.groupby(["answer_model", "judge_id"]) if not rows.empty else []:
        figure.add_scatter(
            name=f"{model} ({judge_id})",
            x=series["materialized_at"],
            y=series["mean"],
            mode="lines+markers",
            line={"color": _colour(colours, model)},
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
            answers = answers_by_model.get(model)
            if answers is None:
                # its scores and answers are each read as its last summary left them, one after
                # the other: a summary another run wrote between the two reads gives scores
                # without answers yet; its cases join at the next refresh
                continue
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
        absence = case_absence(row.get("notes")) if _number(row.get("correctness")) is None else ""
        if absence:  # the record says why its correctness is absent, never 0
            tds[6] = f'<td data-v="" title="{html.escape(absence)}">– ({html.escape(absence)})</td>'
        tds += [
            f"<td>{html.escape(self._diagnosis(cases, row))}</td>",
            f"<td>{_passages_html(case, gold)}</td>",
            f"<td>{html.escape(cases.provenance)}</td>",
        ]
        return "<tr>" + "".join(tds) + "</tr>"

    @staticmethod
    def _diagnosis(cases: _ModelCases, row: Mapping) -> str:
        """The case's diagnosis (its status where none was made, "–" where neither is known: never
        ``nan``), marked where the judge's re-scores flipped."""
        said = next((v for v in (row.get("diagnosis"), row.get("status")) if isinstance(v, str) and v), "–")
        flipped = [f for f in cases.unstable.get(case_key(row), []) if f.startswith(f"{row['judge_id']}/")]
        return said + (f" · unstable ({', '.join(f.split('/', 1)[1] for f in flipped)})" if flipped else "")

    def index(self, keys: Sequence[CaseKey], rows_a_page: int, folder: str) -> dict:
        """What the table filters, sorts and pages by, for every row of ``keys`` (in their order):
        column arrays of codes into the models, judges, case ids (sorted: a prefix is one run of
        them) and diagnoses, and the scores (None where absent). A few bytes a row: 40,000 rows
        filter in a pass over integers, with no row's HTML in the page."""
        models = sorted({k[0] for k in keys})
        qids = sorted({k[1] for k in keys})
        qid_code = {q: n for n, q in enumerate(qids)}
        questions = [""] * len(qids)
        judges: dict[str, int] = {}
        diagnoses: dict[str, int] = {}
        columns: dict[str, list] = {name: [] for name in ("m", "j", "q", "c", "f", "r", "d")}
        absences: dict[str, int] = {}
        absent_at: dict[int, int] = {}  # row -> its reason: only the absent rows, a few bytes each
        model_code = {m: n for n, m in enumerate(models)}

        def number(value: object) -> float | None:
            return None if value is None or pd.isna(value) else round(float(value), 4)  # type: ignore[arg-type]

        for model, whole in itertools.groupby(keys, key=lambda key: key[0]):
            cases = self._models[model]
            # only the columns read here, a chunk of rows at a time: 20,000 rows of every score
            # column as dicts held 0.1 GB
            read = [cases.scores.columns.get_loc(c) for c in INDEX_COLUMNS if c in cases.scores]
            for group in _chunks(whole, INDEX_CHUNK):
                scores = cases.scores.iloc[[k[2] for k in group], read].to_dict("records")
                asked = cases.answers["question"].iloc[[k[3] for k in group]].tolist()
                for key, row, question in zip(group, scores, asked):
                    faithfulness = row.get("faithfulness")
                    if faithfulness is None or pd.isna(faithfulness):
                        faithfulness = row.get("faithfulness_lexical")
                    code = qid_code[key[1]]
                    questions[code] = questions[code] or str(question)[:QUESTION_INDEX_CHARS]
                    columns["m"].append(model_code[model])
                    columns["j"].append(judges.setdefault(str(row["judge_id"]), len(judges)))
                    columns["q"].append(code)
                    columns["c"].append(number(row.get("correctness")))
                    absence = case_absence(row.get("notes")) if columns["c"][-1] is None else ""
                    if absence:
                        absent_at[len(columns["c"]) - 1] = absences.setdefault(absence, len(absences))
                    columns["f"].append(number(faithfulness))
                    columns["r"].append(number(row.get("context_relevance")))
                    columns["d"].append(diagnoses.setdefault(self._diagnosis(cases, row), len(diagnoses)))
        return {
            "models": models,
            "judges": list(judges),
            "diagnoses": list(diagnoses),
            "qids": qids,
            "questions": questions,
            **columns,
            "a": absent_at,
            "absences": list(absences),
            "pageRows": rows_a_page,
            "folder": folder,
            "head": CASE_HEAD,
        }


QUESTION_INDEX_CHARS = 200  # of a question, in the table (its whole text in the row's record)
# the score columns the table's index reads (_CaseRows.index and its _diagnosis), a chunk of rows
# at a time
INDEX_COLUMNS = (
    *("qid", "repeat", "judge_id", "correctness", "faithfulness", "faithfulness_lexical"),
    *("context_relevance", "notes", "diagnosis", "status"),
)
INDEX_CHUNK = 2_000


def _chunks(keys: Iterator[CaseKey], size: int) -> Iterator[list[CaseKey]]:
    while chunk := list(itertools.islice(keys, size)):
        yield chunk


def case_index(pages: Sequence[Sequence[CaseKey]]) -> dict[str, list[list[int]]]:
    """Case id -> [page, row on that page] of each of its rows (every model and judge): what a
    search or "go to a case" reads, so neither scans the rows."""
    index: dict[str, list[list[int]]] = {}
    for number, page in enumerate(pages, start=1):
        for row, key in enumerate(page):
            index.setdefault(key[1], []).append([number, row])
    return index


TABLE_HEAD = ("model", "judge", "case id", "question", "correctness", "faithfulness", "context relevance",
              "diagnosis", "record")  # fmt: skip
# the columns' widths at 1,440 px: ids and names cut with an ellipsis (whole on hover), never broken
_TABLE_WIDTHS = ("13%", "8%", "12%", "auto", "7%", "7%", "7%", "13%", "5.5%")


def _table(rows: CaseRows, index: Mapping, first_page: Sequence[CaseKey]) -> str:
    """The case table: its controls, an empty body that the script fills from the index
    (``CaseRows.index``), and page 1's full records kept aside in a <template>."""
    header = "".join(
        f'<th onclick="sortCases({i})" title="{h}"{" class=n" if i in (4, 5, 6) else ""}>{h}</th>'
        for i, h in enumerate(TABLE_HEAD)
    )
    widths = "".join(f'<col style="width:{w}">' for w in _TABLE_WIDTHS)
    # ASCII (\u escapes), and no "</" that could end the script early
    data = json.dumps(index, separators=(",", ":")).replace("</", "<\\/")
    total = len(index["m"])
    folder = index["folder"]
    pages = -(-total // VIEW_ROWS) or 1
    return (
        '<div id="case-tools"><input id="case-filter" placeholder="filter: a model, a case id or its first '
        'characters, a diagnosis, words of a question" oninput="filterCases()"> '
        f'<span><span id="case-count">{total:,}</span> case rows</span> '
        f'<span id="case-pager" data-folder="{html.escape(folder)}" data-pages="{pages}" data-shown="1">'
        '<button id="page-previous" onclick="showPage(viewPage)">previous</button> '
        'page <input id="page-number" type="number" min="1" value="1" style="width:5rem" '
        'onchange="showPage(parseInt(this.value))"> of <span id="page-total">'
        f"{pages}</span> "
        '<button id="page-next" onclick="showPage(viewPage+2)">next</button></span> '
        '<input id="case-jump" placeholder="go to a case id" style="width:14rem" '
        'onchange="jumpToCase(this.value)" onkeydown="if(event.key===\'Enter\')jumpToCase(this.value)"> '
        '<span id="page-status" class="note"></span></div>'
        f'<p class="note">{VIEW_ROWS} rows a page, by model then case id; the filter, the sort (click a '
        "header) and the pages act on every case of the report; <b>open</b> shows a row's answer, "
        "reference, passages and provenance.</p>"
        f'<table id="cases"><colgroup>{widths}</colgroup><thead><tr>{header}</tr></thead><tbody></tbody></table>'
        f'<template id="case-rows"><table><tbody>{rows.html(first_page)}</tbody></table></template>'
        f"<script>window.caseData={data};</script>"
    )


def cases_absent_html(index: Mapping) -> str:
    """Above the case table: how many rows have correctness absent ("–", never 0) and why, each
    reason once (a row's own reason is on its cell's hover and in its record)."""
    absent_at = index.get("a") or {}
    if not absent_at:
        return ""
    counts = pd.Series(list(absent_at.values())).value_counts(sort=False)
    lines = "".join(
        f"<li>{int(counts.get(code, 0)):,} rows: {html.escape(reason)}</li>"
        for code, reason in enumerate(index["absences"])
    )
    return (
        f'<div class="note" id="cases-absent">Correctness "–" on {len(absent_at):,} case rows: absent, '
        f"never 0 (hover the cell, or open the row, for its reason).<ul>{lines}</ul></div>"
    )


VIEW_ROWS = 100  # rows the table shows at a time (what the script's VIEW_ROWS says)


def case_table(
    scores_by_model: Mapping[str, pd.DataFrame],
    answers_by_model: Mapping[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    summaries: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """Every judged case in one table (``CaseRows``), every record inline."""
    rows = CaseRows(scores_by_model, answers_by_model, judgement_list, summaries)
    ordered = sorted(rows.keys, key=lambda key: (key[0], key[1]))
    return _table(rows, rows.index(ordered, max(1, len(ordered)), ""), ordered)


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


def case_pages(rows: CaseRows, folder: str | None) -> tuple[list[CaseKey], list[list[CaseKey]], int]:
    """The case rows sorted by model and case id, and their records cut into pages: one page
    inline up to ``INLINE_CASE_ROWS`` (or without a ``folder`` to write pages in), else pages of
    ``PAGE_ROWS``, page 1 inline and the others as scripts under ``folder`` (relative to the
    artifacts folder) that the report loads when one of their rows is opened."""
    ordered = sorted(rows.keys, key=lambda key: (key[0], key[1]))
    if folder is None or len(ordered) <= INLINE_CASE_ROWS:
        return ordered, [ordered], max(1, len(ordered))
    return (
        ordered,
        [ordered[start : start + PAGE_ROWS] for start in range(0, len(ordered), PAGE_ROWS)],
        PAGE_ROWS,
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


def _cell(value: object, float_format: Callable[[float], str]) -> str:
    """A value as a table shows it: absent (None, NaN, NaT) as "–", never ``nan`` or ``None``."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):  # type: ignore[arg-type]
        return "–"
    if isinstance(value, float):
        return float_format(value)
    return str(value)


def table_html(
    frame: pd.DataFrame,
    float_format: Callable[[float], str] = lambda v: f"{v:.3f}",
    hovers: Mapping[tuple[int, str], str] | None = None,
) -> str:
    """A table as the report shows it: every cell on one line (cut with an ellipsis past its
    width, its whole value on hover: a number, id or model name is never broken, or what
    ``hovers`` says of it, by row and column), absent values as "–", numbers right-aligned."""
    numeric = {c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])}
    head = "".join(
        f'<th title="{html.escape(str(c))}"{" class=n" if c in numeric else ""}>{html.escape(str(c))}</th>'
        for c in frame.columns
    )
    body = []
    for number, row in enumerate(frame.itertuples(index=False)):
        cells = []
        for column, value in zip(frame.columns, row):
            text = html.escape(_cell(value, float_format))
            title = html.escape((hovers or {}).get((number, column), "")) or text
            cells.append(f'<td title="{title}"{" class=n" if column in numeric else ""}>{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def frame_html(
    frame: pd.DataFrame,
    hovers: Mapping[tuple[int, str], str] | None = None,
    float_format: Callable[[float], str] = lambda v: f"{v:.3f}",
) -> str:
    """A table in a box of the pane's width (``table_html``)."""
    return f'<div class="wide">{table_html(frame, float_format, hovers)}</div>'


def full_table(frame: pd.DataFrame, name: str, what: str, shown: Sequence[str] | None = None) -> str:
    """A whole table one click away: folded, with its every column downloadable as CSV (``shown``:
    the columns drawn, where the CSV carries more)."""
    csv = frame.to_csv(index=False)
    link = (
        f'<a class="csv" download="{html.escape(name)}.csv" '
        f'href="data:text/csv;charset=utf-8,{urllib.parse.quote(csv)}">download CSV ({len(frame):,} rows, '
        f"{len(frame.columns)} columns)</a>"
    )
    drawn = frame[[c for c in shown if c in frame.columns]] if shown else frame
    return (
        f'<details class="full-table" id="table-{html.escape(name)}"><summary>{html.escape(what)} '
        f"({len(frame):,} rows)</summary>{link}{frame_html(drawn)}</details>"
    )


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
        + frame_html(agreement)
        + (frame_html(flags) if len(flags) else "")
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
        + frame_html(pd.DataFrame(rows))
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
        + frame_html(with_intervals(breakdown))
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


def _agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    """Each judge against people, its kappa and rates as one cell with their intervals."""
    return agreement.assign(
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


def _corrected_rows(
    summaries: Mapping[str, pd.DataFrame], corrections: pd.DataFrame | None
) -> list[dict[str, object]]:
    """Each model's judge mean beside the mean corrected by people's labels, where a model has
    labelled cases on the metric."""
    rows: list[dict[str, object]] = []
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
    return rows


def _flagged_html(agreement: pd.DataFrame) -> str:
    flagged = agreement[agreement["flagged"]]
    if not len(flagged):
        return '<p id="flagged-judges">No judge is below the bars.</p>'
    return (
        '<p class="flagged" id="flagged-judges"><b>Flagged:</b> '
        + "; ".join(
            html.escape(f"{r['judge_id']} / {r['metric']}: {r['why']}") for r in flagged.to_dict("records")
        )
        + ". Do not publish these judges' numbers unchecked.</p>"
    )


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
            "to label (docs/human-review.md).</p>"
        )
    rows = _corrected_rows(summaries, corrections)
    corrected = (
        frame_html(pd.DataFrame(rows))
        if rows
        else "<p>No model has two or more labelled cases on a metric: no corrected mean yet.</p>"
    )
    return (
        '<p class="note">Each judge\'s score of an answer against the label people gave it, pooled over '
        "every answer model: exact agreement, Cohen's kappa linearly weighted on the 0 / 0.5 / 1 scale "
        "(95% bootstrap interval), and for pass / fail at 0.5 the share of what people passed that the "
        "judge passed (true-positive rate) and of what they failed that it failed (true-negative rate), "
        "with exact intervals.</p>"
        + _flagged_html(agreement)
        + frame_html(_agreement_table(agreement))
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
            "(`rag-eval diff` lists the cases)</p>" + frame_html(overall[SHOWN_COLUMNS])
        )
    return "".join(blocks) + "</section>"


@dataclass(frozen=True)
class ReportData:
    """Everything a section of the report may read, resolved once: a section is a function of
    this (``SECTIONS``), so adding one is one function and one line."""

    summaries: Mapping[str, pd.DataFrame]
    scores_by_model: Mapping[str, pd.DataFrame]
    answers_by_model: Mapping[str, pd.DataFrame]
    judgement_list: pd.DataFrame
    history: pd.DataFrame
    comparisons: pd.DataFrame
    rows: CaseRows
    colours: Mapping[str, str]  # one per model, in every chart
    images: ImageSection
    cases: Mapping  # the case table's index (``CaseRows.index``): every row's codes and scores
    verdict_rule: str = ""
    stale: Mapping[str, list[str]] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    validation: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None
    agreement_history: pd.DataFrame | None = None
    diffs: pd.DataFrame | None = None
    corrections: pd.DataFrame | None = None
    security: pd.DataFrame | None = None
    simulations: Mapping[str, SimulatedVersion] = field(default_factory=dict)
    kb_health: Mapping[str, dict] = field(default_factory=dict)  # model -> its stored kb_health


def _headline_rows(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    frames = [
        summary[(summary["group"] == OVERALL) & summary["metric"].isin(HEADLINE_METRICS)].assign(model=model)
        for model, summary in sorted(summaries.items())
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def means_table(
    rows: pd.DataFrame, metrics: Sequence[str]
) -> tuple[pd.DataFrame, dict[tuple[int, str], str]]:
    """Each model and judge's means with their intervals, and the hover of each cell whose mean is
    over fewer cases than were scored (correctness absent on some): "(2 of 4 scored)" in the
    cell, the reason on hover."""
    table: list[dict[str, object]] = []
    hovers: dict[tuple[int, str], str] = {}
    for (model, judge_id), group in rows.groupby(["model", "judge_id"], sort=True):
        by_metric = {r["metric"]: r for r in group.to_dict("records")}
        if not any(pd.notna(by_metric[m]["mean"]) for m in metrics if m in by_metric):
            continue
        cells = {
            m: _short_interval(by_metric[m]["mean"], by_metric[m]["ci_low"], by_metric[m]["ci_high"])
            if m in by_metric
            else "–"
            for m in metrics
        }
        for metric in metrics:
            absent = absent_part(by_metric[metric].get("note")) if metric in by_metric else ""
            if absent:
                cells[metric] = f"{cells[metric]} ({scored_of(absent)})"
                hovers[(len(table), metric)] = absent
        cases = int(group["n_cases"].max()) if "n_cases" in group else None
        table.append({"model": model, "judge": judge_id, "cases": cases, **cells})
    return pd.DataFrame(table), hovers


def absence_html(summaries: Mapping[str, pd.DataFrame]) -> str:
    """Under the means: each reason a mean is over fewer cases than were scored, said once with
    the models and counts it concerns (absent, never counted as 0)."""
    said: dict[str, list[str]] = {}
    for model, summary in sorted(summaries.items()):
        if "note" not in summary:
            continue
        overall = summary[summary["group"] == OVERALL]
        for row in overall.to_dict("records"):
            match = ABSENT_COUNTS.match(absent_part(row.get("note")))
            if match:
                scored, total, absent, reason = match.groups()
                said.setdefault(reason, []).append(
                    f"{model} ({row['judge_id']}): {scored} of {total} cases scored, {absent} absent"
                )
    if not said:
        return ""
    lines = "".join(
        f"<li>{html.escape('; '.join(where))}. Why: {html.escape(reason)}</li>"
        for reason, where in said.items()
    )
    return (
        '<div class="note" id="correctness-absent"><b>Correctness absent, never counted as 0</b>: each '
        f"mean above is over its scored cases only.<ul>{lines}</ul></div>"
    )


def _number(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def means_svg(rows: pd.DataFrame, metric: str, colours: Mapping[str, str]) -> str:
    """Each model's mean on ``metric`` with its 95% interval, a dot and a whisker per model."""
    marks = []
    for record in rows[rows["metric"] == metric].sort_values(["model", "judge_id"]).to_dict("records"):
        mean, low, high = (_number(record[k]) for k in ("mean", "ci_low", "ci_high"))
        label = f"{record['model']} ({record['judge_id']})"
        marks.append(
            Interval(
                label,
                mean,
                low,
                high,
                colours.get(record["model"], GREY),
                f"{label}: {_short_interval(record['mean'], record['ci_low'], record['ci_high'])}",
            )
        )
    return interval_rows(marks, 0.0, 1.0, zero=False, title=f"{metric}: mean and 95% interval")


def means_html(data: ReportData) -> str:
    """Per metric, each model's mean with its 95% interval: a table of every headline metric."""
    rows = _headline_rows(data.summaries)
    if rows.empty or rows["mean"].notna().sum() == 0:
        return '<section id="means"><h2>Scores</h2><p>No model has a score yet.</p></section>'
    metrics = [m for m in HEADLINE_METRICS if rows.loc[rows["metric"] == m, "mean"].notna().any()]
    return (
        '<section id="means"><h2>Scores</h2><p class="note">Each model\'s mean over its scored cases '
        "with its 95% interval (method in metric_summary's ci_method; Clopper-Pearson by default). "
        "Overlapping intervals do not decide a comparison: the paired verdicts do.</p>"
        + frame_html(*means_table(rows, metrics))
        + absence_html(data.summaries)
        + _notes_html(data.summaries)
        + "</section>"
    )


def _short_interval(mean: float, low: float, high: float) -> str:
    if pd.isna(mean):
        return "–"
    if pd.isna(low) or pd.isna(high):
        return f"{mean:.2f}"
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]"


def _notes_html(summaries: Mapping[str, pd.DataFrame]) -> str:
    """The summaries' notes on their overall figures (why a figure is absent, what it is over),
    each said once, whatever they say: folded under the means."""
    said: dict[str, list[str]] = {}
    for model, summary in sorted(summaries.items()):
        if "note" not in summary:
            continue
        overall = summary[
            (summary["group"] == OVERALL) & summary["note"].map(lambda v: isinstance(v, str) and bool(v))
        ]
        for row in overall.to_dict("records"):
            said.setdefault(str(row["note"]), []).append(f"{model} · {row['judge_id']} · {row['metric']}")
    if not said:
        return ""
    items = "".join(
        f"<li>{html.escape(note)} <span class='note'>({html.escape('; '.join(where[:4]))}"
        f"{f'; and {len(where) - 4} more' if len(where) > 4 else ''})</span></li>"
        for note, where in said.items()
    )
    return f'<details id="summary-notes"><summary>Notes on these figures ({len(said)})</summary><ul>{items}</ul></details>'


def _pair_label(row: Mapping) -> str:
    return f"{row['model_a']} − {row['model_b']} ({row['judge_id']})"


def forest_svg(comparisons: pd.DataFrame, metric: str, colours: Mapping[str, str] | None = None) -> str:
    """The paired verdicts on ``metric`` as a forest plot: each pair's mean difference (first minus
    second) with its interval; a pair with a verdict in the better model's colour, one without in
    grey. Left of 0 the second model is ahead."""
    rows = comparisons[comparisons["metric"] == metric]
    judges = set(rows["judge_id"])
    marks = []
    for r in rows.to_dict("records"):
        label = _pair_label(r) if len(judges) > 1 else f"{r['model_a']} − {r['model_b']}"
        verdict = str(r["verdict"])
        winner = verdict.removesuffix(" better") if verdict.endswith(" better") else None
        difference = _number(r["difference"])
        marks.append(
            Interval(
                label,
                difference,
                _number(r["ci_low"]),
                _number(r["ci_high"]),
                (colours or {}).get(winner, "#333") if winner else GREY,
                f"{_pair_label(r)}: {'–' if difference is None else f'{difference:+.3f}'} "
                f"[{_cell(r['ci_low'], lambda v: f'{v:+.3f}')}, {_cell(r['ci_high'], lambda v: f'{v:+.3f}')}]; "
                f"{verdict}; p adjusted {_cell(r.get('p_adjusted'), lambda v: f'{v:.3f}')}; {r['n']} cases"
                + (
                    f"; {r['unpaired_note']}"
                    if isinstance(r.get("unpaired_note"), str) and r["unpaired_note"]
                    else ""
                ),
            )
        )
    reach = max(
        [0.1, *(abs(v) for v in rows[["ci_low", "ci_high", "difference"]].to_numpy().ravel() if pd.notna(v))]
    )
    judged = f" ({next(iter(judges))})" if len(judges) == 1 else ""
    return interval_rows(
        marks, -reach, reach, zero=True, title=f"{metric}{judged}: paired differences, 95% interval"
    )


PAIRED_SHOWN = ("model_a", "model_b", "judge_id", "metric", "n", "difference", "ci_low", "ci_high",
                "p_adjusted", "verdict")  # fmt: skip


def _verdicts_said(comparisons: pd.DataFrame) -> str:
    decided = comparisons[comparisons["verdict"].astype(str).str.endswith(" better")]
    rank = {m: n for n, m in enumerate(HEADLINE_METRICS)}  # the headline metrics said first
    decided = decided.iloc[sorted(range(len(decided)), key=lambda i: rank.get(decided["metric"].iloc[i], 99))]
    if not len(decided):
        return f"<b>0 of {len(comparisons)}</b> paired comparisons show a difference."
    said = "; ".join(
        f"{winner} better than {r['model_b'] if winner == r['model_a'] else r['model_a']} on {r['metric']} "
        f"({r['judge_id']}, by {abs(r['difference']):.2f})"
        for r in decided.head(6).to_dict("records")
        for winner in [str(r["verdict"]).removesuffix(" better")]
    )
    more = f"; and {len(decided) - 6} more" if len(decided) > 6 else ""
    return (
        f"<b>{len(decided)} of {len(comparisons)}</b> paired comparisons show a difference: "
        f"{html.escape(said)}{more}."
    )


def answers_html(data: ReportData) -> str:
    """The first screen: for the metric picked, each model's mean with its interval beside the
    paired differences (forest plot); the verdicts in words; the means of every metric."""
    rows = _headline_rows(data.summaries)
    rule = (
        f'<p class="note" id="verdict-rule">{html.escape(data.verdict_rule)}</p>' if data.verdict_rule else ""
    )
    have_means = not rows.empty and rows["mean"].notna().any()
    metrics = [
        m for m in HEADLINE_METRICS if have_means and rows.loc[rows["metric"] == m, "mean"].notna().any()
    ]
    compared = list(dict.fromkeys(data.comparisons["metric"])) if not data.comparisons.empty else []
    metrics += [m for m in compared if m not in metrics]
    pictures = []
    for n, metric in enumerate(metrics):
        hidden = "" if n == 0 else " hidden"
        means = means_svg(rows, metric, data.colours) if have_means and metric in set(rows["metric"]) else ""
        unpaired = "".join(f"<li>{html.escape(n)}</li>" for n in unpaired_notes(data.comparisons, metric))
        forest = (
            forest_svg(data.comparisons, metric, data.colours)
            + (f'<ul class="note unpaired">{unpaired}</ul>' if unpaired else "")
            if metric in compared
            else f"<p>{_why_nothing_is_paired(len(data.summaries)) if not compared else 'not compared on ' + html.escape(metric)}</p>"
        )
        pictures.append(
            f'<div class="answers" data-metric="{html.escape(metric)}"{hidden}><div>{means}</div><div>{forest}</div></div>'
        )
    picker = (
        '<label class="note">metric <select id="metric-pick" onchange="pickMetric(this.value)">'
        + "".join(f'<option value="{html.escape(m)}">{html.escape(m)}</option>' for m in metrics)
        + "</select></label>"
        if len(metrics) > 1
        else ""
    )
    verdicts = (
        f'<p id="verdict-summary">{_verdicts_said(data.comparisons)}</p>'
        if not data.comparisons.empty
        else f'<p id="verdict-summary">{_why_nothing_is_paired(len(data.summaries))}</p>'
    )
    return (
        '<section id="answers"><h2>Which model is better, by how much, how sure</h2>'
        + verdicts
        + picker
        + "".join(pictures)
        + '<p class="note">Right: each pair\'s difference in mean (first minus second) with its 95% '
        "interval, in the better model's colour where the verdict says one is better, grey where no "
        "difference is shown. Hover a row for its figures.</p>" + rule + "</section>" + means_html(data)
    )


def failures_html(data: ReportData) -> str:
    """Where the cases fail, by stage (retrieval, reasoning, grounding...), per model."""
    return f'<section id="failures"><h2>Where it fails</h2>{diagnosis_svg(data.summaries)}</section>'


WORST_PER_MODEL = 3


def worst_cases_html(data: ReportData) -> str:
    """Each model's lowest-scoring cases (correctness, then faithfulness), each a link to its rows."""
    index = data.cases
    picked: list[int] = []
    for code in range(len(index["models"])):
        mine = [i for i, m in enumerate(index["m"]) if m == code and index["c"][i] is not None]
        mine.sort(key=lambda i: (index["c"][i], index["f"][i] if index["f"][i] is not None else 2.0))
        picked += mine[:WORST_PER_MODEL]
    if not picked:
        return ""
    rows = "".join(
        "<tr>"
        + f'<td title="{html.escape(index["models"][index["m"][i]])}">{html.escape(index["models"][index["m"][i]])}</td>'
        + f'<td title="{html.escape(index["judges"][index["j"][i]])}">{html.escape(index["judges"][index["j"][i]])}</td>'
        + f'<td title="{html.escape(q := index["qids"][index["q"][i]])}"><a href="#cases" '
        + f'onclick="goToCase({html.escape(json.dumps(q))})">{html.escape(q)}</a></td>'
        + f'<td title="{html.escape(t := index["questions"][index["q"][i]])}">{html.escape(t)}</td>'
        + "".join(f'<td class="n">{_cell(index[k][i], lambda v: f"{v:.2f}")}</td>' for k in ("c", "f"))
        + f'<td title="{html.escape(g := index["diagnoses"][index["d"][i]])}">{html.escape(g)}</td>'
        + "</tr>"
        for i in picked
    )
    return (
        f'<section id="worst-cases"><h2>Worst cases</h2><p class="note">Each model\'s {WORST_PER_MODEL} lowest '
        "on correctness (then faithfulness); a case id shows its every row below, `rag-eval explain` "
        "tells its whole story.</p>"
        '<div class="wide"><table class="fit" id="worst"><colgroup><col style="width:16%"><col style="width:9%">'
        '<col style="width:14%"><col><col style="width:8%"><col style="width:8%"><col style="width:14%"></colgroup>'
        '<thead><tr><th>model</th><th>judge</th><th>case id</th><th>question</th><th class="n">correctness</th>'
        f'<th class="n">faithfulness</th><th>diagnosis</th></tr></thead><tbody>{rows}</tbody></table></div></section>'
    )


def full_tables_html(data: ReportData) -> str:
    """The whole tables behind the pictures, folded, each downloadable."""
    parts = ['<section id="full-tables"><h2>Full tables</h2>']
    overall = [s[s["group"] == OVERALL].assign(answer_model=m) for m, s in sorted(data.summaries.items())]
    if overall:
        means = pd.concat(overall, ignore_index=True)
        columns = [*MEAN_COLUMNS, "n_failed", "ci_method"]
        parts.append(full_table(means, "metric_summary", "Every metric of every model", columns))
    if not data.comparisons.empty:
        parts.append(full_table(data.comparisons, "paired_comparison", "Paired comparison", PAIRED_SHOWN))
    return "".join(parts) + "</section>" if len(parts) > 1 else ""


def _section(title: str, anchor: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{title}</h2>{body}</section>' if body else ""


# the report's sections in order, each a function of ReportData: answers first, the evidence after
SECTIONS: tuple[Callable[[ReportData], str], ...] = (
    lambda d: _missing_html(d.missing) if d.missing else "",
    lambda d: _stale_html(d.stale) if d.stale else "",
    answers_html,
    failures_html,
    worst_cases_html,
    lambda d: baseline_diffs_html(d.diffs) if d.diffs is not None and not d.diffs.empty else "",
    full_tables_html,
    lambda d: _section(
        "Distributions",
        "distributions",
        _figure_html(distribution_chart(d.scores_by_model, colours=d.colours)),
    ),
    lambda d: language_html(d.summaries),
    lambda d: d.images.html,  # reporting/images.py
    lambda d: security_html(d.security),
    lambda d: simulation_html(d.simulations),  # reporting/simulation.py: empty when nothing was simulated
    lambda d: knowledge_health_html(d.kb_health),  # reporting/knowledge_health.py: empty without kb_health
    lambda d: (
        '<h2 id="judge-validation">Can the judges be trusted?</h2>' + judge_validation_html(d.validation)
    ),
    lambda d: judge_stability_html(d.summaries),
    lambda d: (
        '<section id="human-review"><h2>Judges against people</h2>'
        + human_review_html(d.agreement, d.summaries, d.agreement_history, d.corrections)
        + "</section>"
    ),
    lambda d: _section("Trend", "trend", _figure_html(trend_chart(d.history, colours=d.colours))),
)


@dataclass(frozen=True)
class RenderedReport:
    html: str
    pages: Mapping[str, str]  # the companion pages: path under the artifacts folder -> script
    files: Mapping[str, Callable[[], bytes]] = field(default_factory=dict)  # images beside it


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
    """The whole report as one HTML string (its case records paged into files under
    ``pages_folder`` beyond ``INLINE_CASE_ROWS``, its images as display copies beside it in
    ``files``): what a team decides on first (means with intervals, paired verdicts, failures,
    worst cases), the models without results (``missing``) and ``stale`` ones before them, so
    partial results read as partial; the evidence after, the full tables folded."""
    rows = CaseRows(scores_by_model, answers_by_model, judgement_list, summaries)
    ordered, paged, rows_a_page = case_pages(rows, pages_folder)
    # what the table filters, sorts and pages by, made once (the worst cases read it too)
    index = rows.index(ordered, rows_a_page, pages_folder or "")
    cases = _table(rows, index, paged[0])
    pages = PageScripts(pages_folder, rows, paged) if pages_folder is not None and len(paged) > 1 else {}
    models = [*summaries, *answers_by_model, *(missing or {})]
    if history is not None and not history.empty and "answer_model" in history:
        models += list(history["answer_model"].unique())
    colours = model_colours(models)
    data = ReportData(
        summaries, scores_by_model, answers_by_model, judgement_list, history, comparisons, rows, colours,
        images_html(summaries, answers_by_model, judgement_list, image_folder, colours), index,
        verdict_rule, stale or {}, missing or {}, validation, agreement, agreement_history, diffs,
        corrections, security, simulations or {}, kb_health or {},
    )  # fmt: skip
    sections = [section(data) for section in SECTIONS]
    document = (
        "<!doctype html><html><head><meta charset='utf-8'><title>RAG evaluation report</title>"
        # no icon to fetch: a server (`rag-eval ui`) would answer 404 and the console say so
        "<link rel='icon' href='data:,'>"
        f"<style>{_STYLE}</style>{lazy_plotly_script()}<script>{_TABLE_SCRIPT}</script></head><body>"
        f"<h1>RAG evaluation report</h1>{_header_html(summaries, missing or {})}"
        + "".join(sections)
        + f"<h2>Cases</h2>{cases_absent_html(index)}{cases}"
        + "</body></html>"
    )
    return RenderedReport(document, pages, data.images.files)
