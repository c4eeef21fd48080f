"""HTML building blocks: escaping, tables with caps, the page shell (inline CSS and JS).

Everything text-like goes through :func:`esc`; markup built here is a :class:`Markup`, which
:func:`esc` passes through unchanged, so a value is escaped exactly once.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = [
    "Cell",
    "Markup",
    "Sortable",
    "cap_note",
    "esc",
    "join",
    "num",
    "page",
    "pct",
    "secs",
    "table",
]


class Markup(str):
    """A string of HTML that is safe to insert as it is."""

    __slots__ = ()


class Sortable:
    """A cell shown as ``text`` that sorts as the number ``key`` (a percentage, a duration)."""

    __slots__ = ("key", "text")

    def __init__(self, text: str, key: float) -> None:
        self.text = text
        self.key = key


#: What a table cell may hold: text (escaped), markup, or text sorting as a number.
Cell = str | int | float | None | Markup | Sortable


def esc(value: object) -> Markup:
    """``value`` as HTML text: ``&``, ``<``, ``>`` and both quotes escaped (markup as is)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def join(parts: Iterable[str], sep: str = "") -> Markup:
    """Concatenate markup (text parts are escaped)."""
    return Markup(sep.join(esc(p) for p in parts))


def num(value: float | int) -> str:
    """A number as people read it: integers plain, others with up to 3 significant digits."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal; ``-`` for none."""
    return "-" if value is None else f"{100 * value:.1f}%"


def secs(value: float | None) -> str:
    """Virtual seconds; ``-`` for none."""
    if value is None:
        return "-"
    return f"{value:.3g}s" if abs(value) < 1000 else f"{value:,.0f}s"


def cap_note(shown: int, total: int, what: str, hint: str = "") -> Markup:
    """The note under a capped table: how much is shown, how much is not, where the rest is."""
    if shown >= total:
        return Markup("")
    text = (
        f"Showing the first {shown:,} of {total:,} {what}; the other {total - shown:,} are "
        "not in this page (raise max_rows to include them)."
    )
    if hint:
        text += f" {hint}"
    return Markup(f'<p class="cap">{esc(text)}</p>')


def _cell(value: Cell) -> tuple[Markup, str]:
    """The cell's markup and its sort key (numbers sort as numbers)."""
    if isinstance(value, Markup):
        return value, ""
    if isinstance(value, Sortable):
        return esc(value.text), repr(float(value.key))
    if isinstance(value, bool) or value is None:
        return esc("-" if value is None else str(value).lower()), ""
    if isinstance(value, int | float):
        return esc(num(value)), repr(float(value))
    return esc(value), ""


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    *,
    limit: int,
    what: str,
    table_id: str = "",
    filterable: bool = False,
    hint: str = "",
    css: str = "",
) -> Markup:
    """A sortable table of at most ``limit`` rows, with a note saying what was left out.

    Args:
        headers: the column titles.
        rows: every row (cells: text, numbers or :class:`Markup`).
        limit: show at most this many rows.
        what: what a row is, plural (``"pods"``), for the note.
        table_id: the table's ``id`` (a filter box needs one).
        filterable: put a filter box above the table (needs ``table_id``).
        hint: where the rows not shown can be found.
        css: extra classes.
    """
    out: list[str] = []
    if filterable and table_id and len(rows) > 1:
        out.append(
            f'<input class="filter" type="search" placeholder="Filter {esc(what)}" '
            f'aria-label="Filter {esc(what)}" data-filter="{esc(table_id)}">'
        )
    attrs = f' id="{esc(table_id)}"' if table_id else ""
    out.append(f'<table class="sortable {esc(css)}"{attrs}><thead><tr>')
    out.extend(f"<th>{esc(h)}</th>" for h in headers)
    out.append("</tr></thead><tbody>")
    for row in rows[:limit]:
        out.append("<tr>")
        for value in row:
            body, key = _cell(value)
            sort = f' data-sort="{key}"' if key else ""
            out.append(f"<td{sort}>{body}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    out.append(cap_note(min(limit, len(rows)), len(rows), what, hint))
    return Markup("".join(out))


# The page's only style sheet and script, inline: the page must work offline and a file:// page
# must not fetch anything (the Content-Security-Policy below forbids it).
_CSS: Final = """
:root{--fg:#1d232a;--muted:#5b6570;--line:#d9dee3;--bg:#fff;--panel:#f5f7f9;
--ok:#2e7d32;--bad:#c62828;--warn:#b26a00;--pre:#6a1b9a;--done:#607d8b;--acc:#1565c0}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--fg);background:var(--bg)}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--panel)}
header h1{margin:0 0 4px;font-size:20px}
header p{margin:0;color:var(--muted)}
nav{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--line);
padding:6px 24px;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a{color:var(--acc);text-decoration:none;font-size:13px}
nav a:hover{text-decoration:underline}
main{padding:8px 24px 48px;max-width:1400px}
section{margin-top:24px}
h2{font-size:17px;margin:0 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:16px 0 6px}
h4{font-size:14px;margin:12px 0 4px}
.figs{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.fig{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:110px;
background:var(--panel)}
.fig .v{display:block;font-size:20px;font-weight:600}
.fig .k{display:block;color:var(--muted);font-size:12px}
.fig.bad .v{color:var(--bad)}
.fig.ok .v{color:var(--ok)}
table{border-collapse:collapse;margin:6px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);cursor:pointer;user-select:none;white-space:nowrap}
th.asc::after{content:" \\25B2";font-size:10px}
th.desc::after{content:" \\25BC";font-size:10px}
td[data-sort]{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.tl td:not(:last-child){white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
.side{display:grid;grid-template-columns:1fr 1fr;gap:24px}
.side>div{min-width:0;overflow-x:auto}
.cap,.note{color:var(--muted);font-size:12px;margin:4px 0}
.cap{color:var(--warn)}
.filter{margin:6px 0;padding:4px 8px;width:320px;max-width:100%;border:1px solid var(--line);
border-radius:4px}
.state{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;color:#fff}
.s-running,.s-bound{background:var(--ok)}.s-pending{background:var(--bad)}
.s-preempted{background:var(--pre)}.s-completed,.s-deleted{background:var(--done)}
.s-not-arrived,.s-evicted{background:var(--warn)}
ol.ev{margin:0;padding-left:18px}
ol.ev li{margin:0}
.ev-failed,.ev-unschedulable,.ev-error{color:var(--bad)}
.ev-preempted,.ev-evicted{color:var(--pre)}
.zone{margin:8px 0 14px}
.node{display:flex;align-items:flex-start;gap:8px;border-top:1px solid var(--line);padding:3px 0}
.node .n{width:200px;flex:none;font-family:ui-monospace,monospace;font-size:12px;
overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.node .bars{width:120px;flex:none}
.bar{height:6px;background:#e3e7eb;border-radius:3px;margin:2px 0;overflow:hidden}
.bar i{display:block;height:100%;background:var(--acc)}
.bar.over i{background:var(--bad)}
.pods{display:flex;flex-wrap:wrap;gap:2px}
.pod{font-size:11px;padding:0 4px;border-radius:3px;background:#e3f2e5;
border:1px solid #b7dcbb;white-space:nowrap}
.pod.cl{background:#eceff1;border-color:#cfd8dc}
.pod.moved{background:#fff3e0;border-color:#ffcc80}
.pod.pend{background:#ffebee;border-color:#ef9a9a}
details{margin:6px 0}
summary{cursor:pointer}
.msg{font-family:ui-monospace,monospace;font-size:12px;background:var(--panel);
padding:4px 8px;border-radius:4px;white-space:pre-wrap;word-break:break-word}
svg{max-width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}
"""

_JS: Final = """
(function(){
function key(td){var s=td.getAttribute('data-sort');return s===null?td.textContent.trim().toLowerCase():parseFloat(s);}
function sortBy(th){
var table=th.closest('table'),tbody=table.tBodies[0],i=th.cellIndex;
var desc=th.classList.contains('asc');
Array.prototype.forEach.call(th.parentNode.children,function(h){h.classList.remove('asc','desc');});
th.classList.add(desc?'desc':'asc');
var rows=Array.prototype.slice.call(tbody.rows);
rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
return desc?-c:c;});
rows.forEach(function(r){tbody.appendChild(r);});
}
document.querySelectorAll('table.sortable th').forEach(function(th){
th.addEventListener('click',function(){sortBy(th);});});
document.querySelectorAll('input[data-filter]').forEach(function(box){
var table=document.getElementById(box.getAttribute('data-filter'));
box.addEventListener('input',function(){
var q=box.value.trim().toLowerCase();
Array.prototype.forEach.call(table.tBodies[0].rows,function(r){
r.style.display=(!q||r.textContent.toLowerCase().indexOf(q)>=0)?'':'none';});});});
})();
"""

_CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
)


def page(title: str, subtitle: str, nav: Sequence[tuple[str, str]], body: str) -> str:
    """The whole document: head with inline CSS, header, section links, body, inline script."""
    links = "".join(f'<a href="#{esc(anchor)}">{esc(text)}</a>' for anchor, text in nav)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="schedframe.report">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head>\n"
        f"<body><header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>\n"
        f"<nav>{links}</nav>\n<main>\n{body}\n</main>\n<script>{_JS}</script></body></html>\n"
    )
