"""HTML building blocks of the report: escaping, tables, embedded images,
Markdown bodies, and the page around them (one file, no scripts, no
external resources: it opens anywhere, offline)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

#: The first line of every report ccarena writes (how a later run knows
#: the file is ours and may be replaced).
FIRST_LINE = "<!DOCTYPE html><!-- written by ccarena report -->"

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 24px 48px; color: #1b1f24; }
h1 { font-size: 26px; margin: 28px 0 4px; } h2 { font-size: 21px; margin: 36px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 17px; margin: 22px 0 6px; }
table { border-collapse: collapse; margin: 10px 0 16px; font-size: 13.5px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.agrees { color: #1a7f37; font-weight: 600; } .differs { color: #cf222e; font-weight: 600; } .none { color: #6e7781; }
figure { margin: 12px 0 20px; } figure img { max-width: 100%; border: 1px solid #d0d7de; }
figcaption { font-size: 13px; color: #57606a; } pre, code { font: 12.5px/1.4 ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; border-radius: 4px; }
nav ul { columns: 2; font-size: 14px; } .meta { color: #57606a; font-size: 13px; }
.kind { display: inline-block; font-size: 12px; background: #ddf4ff; border-radius: 10px; padding: 0 8px; margin-left: 6px; vertical-align: middle; }
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def table(header: Sequence[str], rows: Sequence[Sequence[object]], *, numeric: Sequence[int] = (),
          raw: Sequence[int] = ()) -> str:
    """A table; cells in columns ``numeric`` are right-aligned, those in
    ``raw`` are trusted HTML (already escaped)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            content = str(cell) if i in raw else esc(cell)
            cells.append(f'<td class="num">{content}</td>' if i in numeric else f"<td>{content}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def image(path: Path, caption: str) -> str:
    """A PNG embedded as a data URI, with its caption."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return (f'<figure><img alt="{esc(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def markdown(text: str) -> str:
    """A Markdown body (an experiment's sections, its reasons) as HTML;
    raw HTML in it is escaped, not passed through."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def inline_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).renderInline(text)


def code(text: str) -> str:
    return f"<pre><code>{esc(text)}</code></pre>"


def page(title: str, meta: str, nav: Sequence[tuple[str, str]], body: str) -> str:
    links = "".join(f'<li><a href="#{esc(anchor)}">{esc(label)}</a></li>' for anchor, label in nav)
    return (
        f"{FIRST_LINE}\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><p class=\"meta\">{meta}</p>"
        f"<nav><ul>{links}</ul></nav>{body}</body></html>\n"
    )
