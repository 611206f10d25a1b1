"""The labelling page: one self-contained HTML file (no server, no network) that shows each case
of a review queue and downloads the reviewer's labels as ``<queue>.labels.jsonl``, the file
``rag-eval review import`` reads."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{position:sticky;top:0;background:#1d2330;color:#fff;padding:10px 18px;display:flex;gap:18px;
align-items:center;flex-wrap:wrap;z-index:2}
header input{font:inherit;padding:3px 6px}
header button{font:inherit;padding:4px 14px;cursor:pointer}
#help{font-size:13px;opacity:.8}
main{max-width:980px;margin:0 auto;padding:14px}
.case{background:#fff;border:2px solid #dde1e8;border-radius:8px;padding:12px 16px;margin:14px 0}
.case.current{border-color:#3b6fd8}
.case h3{margin:0 0 6px;font-size:14px;color:#5a6272}
.question{font-weight:600;font-size:16px}
.answer{background:#eef4ff;padding:6px 10px;border-radius:6px;margin:6px 0;white-space:pre-wrap}
.truth{color:#176b36}
.failed{color:#a11}
details{margin:6px 0}
.passage{border-left:3px solid #ccd;padding:2px 8px;margin:4px 0;font-size:13px}
.passage.gold{border-color:#2a9d55;background:#f0faf3}
.metric{display:flex;gap:12px;align-items:center;padding:4px 6px;border-radius:6px}
.metric.current{background:#fff6d6}
.metric .name{width:150px;font-weight:600}
.metric input[type=text]{flex:1;font:inherit;padding:2px 6px}
.judge{font-size:12px;color:#5a6272}
"""

_SCRIPT = """
const QUEUE = JSON.parse(document.getElementById('queue-data').textContent);
const VALUES = [0, 0.5, 1];
let current = {c: 0, m: 0};
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v; else if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c) e.appendChild(c);
  return e;
}
function render() {
  const main = document.getElementById('cases');
  QUEUE.cases.forEach((c, ci) => {
    const box = el('section', {class: 'case', id: 'case-' + ci, 'data-qid': c.qid});
    box.appendChild(el('h3', {text: `case ${ci + 1} of ${QUEUE.cases.length} · ${c.qid}`}));
    box.appendChild(el('div', {class: 'question', text: c.question}));
    if (c.failed) box.appendChild(el('div', {class: 'failed', text: 'the answer failed: ' + c.failed}));
    else box.appendChild(el('div', {class: 'answer', text: c.answer}));
    if (c.truth !== null) box.appendChild(el('div', {class: 'truth',
      text: c.truth_is_abstention ? 'truth: the documents do not answer this' : 'truth: ' + c.truth}));
    const passages = el('details', {open: ''},
      el('summary', {text: `passages the answer had (${c.passages.length})`}));
    c.passages.forEach(p => passages.appendChild(el('div', {class: 'passage' + (p.gold ? ' gold' : '')},
      el('b', {text: p.title + (p.gold ? ' (gold)' : '') + ': '}), document.createTextNode(p.text))));
    box.appendChild(passages);
    c.metrics.forEach((metric, mi) => {
      const row = el('div', {class: 'metric', id: `m-${ci}-${mi}`});
      row.appendChild(el('span', {class: 'name', text: metric}));
      VALUES.forEach(v => {
        const input = el('input', {type: 'radio', name: `label-${ci}-${mi}`, value: String(v),
                                    'data-metric': metric, 'aria-label': `${metric} ${v}`});
        input.addEventListener('change', () => { current = {c: ci, m: mi}; update(); });
        row.appendChild(el('label', {}, input, document.createTextNode(' ' + v)));
      });
      row.appendChild(el('input', {type: 'text', class: 'note', placeholder: 'note', 'data-metric': metric}));
      const verdicts = Object.entries(c.judge).filter(([k]) => k.endsWith(' / ' + metric));
      if (verdicts.length) row.appendChild(el('span', {class: 'judge',
        text: 'judge: ' + verdicts.map(([k, v]) => k.split(' / ')[0] + ' ' + v).join(', ')}));
      box.appendChild(row);
    });
    main.appendChild(box);
  });
}
function labels() {
  const reviewer = document.getElementById('reviewer').value.trim();
  const at = new Date().toISOString();
  const rows = [];
  QUEUE.cases.forEach((c, ci) => c.metrics.forEach((metric, mi) => {
    const chosen = document.querySelector(`input[name="label-${ci}-${mi}"]:checked`);
    if (!chosen) return;
    const note = document.querySelector(`#m-${ci}-${mi} input.note`).value;
    rows.push({qid: c.qid, answer_model: c.answer_model, metric, label: Number(chosen.value),
               reviewer, note, labelled_at: at, queue: QUEUE.queue, selection: c.selection,
               inclusion_probability: c.inclusion_probability, queue_position: c.queue_position,
               queue_size: c.queue_size, case_set: c.case_set});
  }));
  return rows;
}
function update() {
  document.querySelectorAll('.current').forEach(e => e.classList.remove('current'));
  const box = document.getElementById('case-' + current.c);
  if (box) box.classList.add('current');
  const row = document.getElementById(`m-${current.c}-${current.m}`);
  if (row) row.classList.add('current');
  const total = QUEUE.cases.reduce((n, c) => n + c.metrics.length, 0);
  document.getElementById('progress').textContent = `${labels().length} of ${total} labelled`;
}
function move(caseStep) {
  current = {c: Math.min(Math.max(current.c + caseStep, 0), QUEUE.cases.length - 1), m: 0};
  update();
  document.getElementById('case-' + current.c).scrollIntoView({block: 'start'});
}
function setLabel(value) {
  // labels the highlighted metric and stays on it: only m, j and k move, as the legend says
  const input = document.querySelector(`input[name="label-${current.c}-${current.m}"][value="${value}"]`);
  if (!input) return;
  input.checked = true;
  update();
}
function save() {
  const reviewer = document.getElementById('reviewer');
  if (!reviewer.value.trim()) {
    alert('Type your name first: every label says who gave it.'); reviewer.focus(); return;
  }
  const body = labels().map(r => JSON.stringify(r)).join('\\n') + '\\n';
  const link = el('a', {href: URL.createObjectURL(new Blob([body], {type: 'application/x-ndjson'})),
                        download: QUEUE.queue + '.labels.jsonl'});
  document.body.appendChild(link); link.click(); link.remove();
}
document.addEventListener('keydown', e => {
  if (e.target.tagName === 'INPUT' && e.target.type === 'text') return;  // typing a note or a name
  const keys = {j: () => move(1), k: () => move(-1), '1': () => setLabel(0), '2': () => setLabel(0.5),
                '3': () => setLabel(1), s: save,
                m: () => { current.m = (current.m + 1) % QUEUE.cases[current.c].metrics.length; update(); }};
  if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
});
render();
document.getElementById('save').addEventListener('click', save);
update();
"""


def _embedded_json(value: Any) -> str:
    """JSON safe inside a <script> element: no '</' can close it early."""
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")


def labelling_page(queue: str, records: Sequence[dict[str, Any]], blind: bool) -> str:
    """The whole page as one HTML string; the cases travel as JSON inside it."""
    data = _embedded_json({"queue": queue, "cases": list(records)})
    mode = "blind: the judges' verdicts are hidden" if blind else "the judges' verdicts are shown"
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>Review {html.escape(queue)}</title><style>{_STYLE}</style></head><body>"
        f"<header><b>Review {html.escape(queue)}</b>"
        "<label>reviewer <input id='reviewer' autocomplete='name' placeholder='your name'></label>"
        "<span id='progress'></span><button id='save'>Save labels</button>"
        f"<span id='help'>{html.escape(mode)} · keys: 1 / 2 / 3 label the highlighted metric "
        "0 / 0.5 / 1, m next metric, j / k next / previous case, s save</span></header>"
        "<main id='cases'></main>"
        f"<script type='application/json' id='queue-data'>{data}</script>"
        f"<script>{_SCRIPT}</script></body></html>"
    )
