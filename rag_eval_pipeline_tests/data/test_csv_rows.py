"""A CSV file's rows as written, whatever its shape: quoted commas, quotes and line breaks in
cells, CRLF or LF, a byte-order mark, blank lines between rows; each row named by the line it
starts on."""

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.data.rows import first_row_columns, read_rows

NAMES = st.lists(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1, max_size=4, unique=True)
CELL = st.text(st.sampled_from('ab ,"\n\r;é'), max_size=12).map(lambda s: s.replace("\r", ""))


@st.composite
def tables(draw):
    header = draw(NAMES)
    rows = draw(st.lists(st.lists(CELL, min_size=len(header), max_size=len(header)), max_size=6))
    rows = [r for r in rows if any(c.strip() for c in r)]  # a row of nothing is no row
    return header, rows, draw(st.sampled_from(["\n", "\r\n"])), draw(st.booleans()), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(tables())
def test_rows_read_as_written_each_named_by_its_first_line(tmp_path_factory, table):
    header, rows, newline, bom, blank_lines = table
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=newline)
    writer.writerow(header)
    starts = []
    for row in rows:
        if blank_lines:
            out.write(newline)
        starts.append(out.getvalue().count("\n") + 1)
        writer.writerow(row)
    path = tmp_path_factory.mktemp("csv") / "rows.csv"
    path.write_bytes(("\ufeff" if bom else "").encode() + out.getvalue().encode())
    read, problems = read_rows(path)
    assert problems == []
    assert [where for where, _ in read] == [f"line {n}" for n in starts]
    assert [[r[name] for name in header] for _, r in read] == rows
    assert first_row_columns(path) == set(header)
