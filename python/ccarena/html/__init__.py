"""``ccarena report DIR... [--out FILE]``: one self-contained HTML page
over any set of run, sweep, scorecard or experiment directories.

Every section is rendered from the structured record a command wrote
(summary.json, sweep.json + points.parquet, scorecard.json, an
experiment's results.json), never by parsing Markdown, so report.md and
this page are two views of one record. Images are embedded, there are
no scripts and no external resources. The same directories give the
same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import ScenarioError
from . import page
from .sources import Section, load

__all__ = ["render", "write"]


def render(directories: Sequence[Path]) -> str:
    from .. import _core, __version__

    sections: list[Section] = []
    for d in directories:
        sections += load(Path(d))
    seen: dict[str, int] = {}
    body = []
    nav = []
    for s in sections:
        # Two directories of the same name still get distinct anchors.
        n = seen[s.anchor] = seen.get(s.anchor, 0) + 1
        anchor = s.anchor if n == 1 else f"{s.anchor}-{n}"
        nav.append((anchor, s.title))
        body.append(f'<section id="{page.esc(anchor)}"><h2>{page.esc(s.title)}<span class="kind">{page.esc(s.kind)}</span></h2>'
                    f"{s.html}</section>")
    kinds = sorted({s.kind for s in sections})
    meta = (f"{len(sections)} section(s): {', '.join(kinds)}. ccarena {page.esc(__version__)}, "
            f"engine build {page.esc(_core.build_id())}.")
    return page.page("ccarena report", meta, nav, "".join(body))


def write(directories: Sequence[Path], out: Path) -> Path:
    """Render and write ``out`` (replacing only a report ccarena wrote)."""
    from ..rundir import check_owned_file, write_file_atomic

    if not directories:
        raise ScenarioError("report", "name at least one run, sweep, scorecard or experiment directory")
    out = Path(out)
    check_owned_file(out, page.FIRST_LINE)
    text = render(directories)
    write_file_atomic(out, text)
    return out
