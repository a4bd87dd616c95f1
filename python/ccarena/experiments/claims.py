"""A paper's claims as data: ``experiments/<paper>/claims.toml``.

Each ``[[claim]]`` is one statement of the paper, tested once:

- ``id``: unique within the paper; ``experiment``: the experiment that
  measures it (``hock-large-buffer``);
- ``quote``: the paper's words, verbatim, and ``line``: where they start in
  ``../shared/papers/<paper file>`` (a test checks both);
- ``quantity``: what is measured, and ``metric``: how, in the paper's
  definition (or ours, said so, where the paper gives none);
- ``unit``, ``scale``, ``format``: how numbers are shown (a share of 0.43
  with ``scale = 100``, ``unit = "%"``, ``format = ".1f"`` is "43.0%");
- ``[claim.paper]``: what the paper states, one of
    ``value = x`` (a number), ``between = [lo, hi]`` (a range),
    ``at_least = lo`` / ``at_most = hi`` (a bound),
    ``order = "increasing" | "decreasing" | "constant"`` (over the members,
    in the order the experiment measures them; "constant": no change from
    one member to the next, "independent of the buffer size"), or
    ``shown = "why"`` (a word the paper gives no number for: shown, not judged);
  with ``source`` (where the number, range or bound comes from: the
  paper's words or figure, cited by line). A ``value`` also says how
  precise the paper's number is, one of
    ``written = "6.3"``: the number as the paper writes it, in the unit the
    claim shows (``value`` times ``scale``). The paper states it to its
    last digit, so its spread is half a unit of that digit ("6.3": +-0.05;
    "50%": +-0.5%; :func:`half_unit`);
    ``exact = "why"``: a number with no digits to round (a constant of the
    design, cwnd_gain 2's "2 BDP" cap; a word read as a number, "the
    same" as a difference of 0): spread 0;
    ``spread = x``: a half-width the paper itself states (cited in
    ``source``);
  a range or a bound is taken as stated, spread 0: its ends are the
  paper's thresholds, not rounded measurements;
- ``members``: for a claim about a set (buffers, RTTs, flows), ``"all"``
  (every member the paper names must agree) or a count the paper states
  (``members = 9`` of ten), with ``members_source`` citing it.

Only :mod:`.verdict` turns a claim and an experiment's per-seed values into
a verdict; experiment modules measure (``Report.measured``) and never judge.
"""

from __future__ import annotations

import re

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: Where the papers' texts are, relative to the repository (DESIGN.md).
PAPERS_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "papers"

#: The kinds of statement ``[claim.paper]`` may hold, one per claim.
KINDS = ("value", "between", "at_least", "at_most", "order", "shown")
ORDERS = ("increasing", "decreasing", "constant")


@dataclass(frozen=True)
class Claim:
    id: str
    experiment: str
    quote: str
    line: int
    quantity: str
    metric: str
    #: The interval the paper's number, range or bound states (lo, hi);
    #: None for an order or a shown claim.
    interval: tuple[float, float] | None
    order: str | None
    #: Why a claim is shown and not judged (the paper's word without a number).
    shown: str | None
    #: The paper's spread, in the claim's own units (before ``scale``):
    #: half a unit of the last digit of a ``written`` number, a half-width
    #: the paper states, or 0.
    spread: float
    source: str
    unit: str = ""
    scale: float = 1.0
    format: str = ".3g"
    #: "all", a count of members that must agree, or None (one quantity).
    members: str | int | None = None
    members_source: str = ""
    #: The paper's number as it writes it ("6.3"), when the spread is its last digit's.
    written: str = ""

    @property
    def judged(self) -> bool:
        return self.shown is None

    def show(self, x: float, *, signed: bool = False, extra_digits: int = 0) -> str:
        fmt = self.format
        if extra_digits and (m := re.fullmatch(r"\.(\d+)([fe%])", fmt)):
            fmt = f".{int(m.group(1)) + extra_digits}{m.group(2)}"
        return format(x * self.scale, ("+" if signed else "") + fmt) + self.unit

    def show_apart(self, a: float, b: float) -> tuple[str, str]:
        """``a`` and ``b`` as :meth:`show` gives them, with more digits (up
        to 6 more) where that would print two different numbers alike, so
        that a printed "x > y" can be checked by a reader."""
        same = abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))  # alike but for float rounding
        for extra in range(7):
            shown = self.show(a, extra_digits=extra), self.show(b, extra_digits=extra)
            if same or shown[0] != shown[1]:
                return shown
        return shown

    def stated(self) -> str:
        """The paper's statement as numbers ("1.00-1.50 BDP", ">= 90.0%")."""
        if self.shown is not None:
            return "no number"
        if self.order is not None:
            return self.order
        lo, hi = self.interval
        if lo == hi:
            return self.show(lo)
        if hi == float("inf"):
            return ">= " + self.show(lo)
        if lo == -float("inf"):
            return "<= " + self.show(hi)
        return f"{self.show(lo)} to {self.show(hi)}"


class ClaimsError(ValueError):
    pass


#: How a ``written`` number looks: ASCII digits, at most one decimal point.
_WRITTEN = re.compile(r"[0-9]+(?:\.[0-9]+)?", re.ASCII)


def half_unit(written: str) -> float:
    """Half a unit of the last digit of a number as written: "6.3" -> 0.05,
    "50" -> 0.5, "1.8412" -> 0.00005."""
    decimals = len(written.partition(".")[2])
    return 0.5 * 10.0 ** -decimals


def _precision(where: str, stated: dict, interval: tuple[float, float] | None, scale: float) -> tuple[float, str]:
    """(spread in the claim's units, the written number or "") of a
    ``[claim.paper]`` table, by the one convention (module docstring)."""
    given = [k for k in ("written", "exact", "spread") if k in stated]
    is_value = interval is not None and "value" in stated
    if not is_value:
        if given:
            raise ClaimsError(f"{where}: {given[0]} belongs to a value; a range or a bound is taken as stated")
        return 0.0, ""
    if len(given) != 1:
        raise ClaimsError(f"{where}: a value says how precise the paper's number is: exactly one of written "
                          f"(the number as the paper writes it), exact (why it has no digits to round) or spread "
                          f"(got {given or 'none'})")
    if "exact" in stated:
        if not str(stated["exact"]).strip():
            raise ClaimsError(f"{where}: exact says why the number has no digits to round")
        return 0.0, ""
    if "spread" in stated:
        return abs(float(stated["spread"])), ""
    written = stated["written"]
    if not isinstance(written, str) or not _WRITTEN.fullmatch(written):
        raise ClaimsError(f"{where}: written is the paper's number as a string of digits (\"6.3\"), got {written!r}")
    shown = interval[0] * scale
    if abs(float(written) - shown) > 1e-9 * max(1.0, abs(shown)):
        raise ClaimsError(f"{where}: written {written!r} is not the value shown ({shown:g}: value x scale)")
    return half_unit(written) / scale, written


def _interval(where: str, stated: dict) -> tuple[tuple[float, float] | None, str | None, str | None]:
    kinds = [k for k in KINDS if k in stated]
    if len(kinds) != 1 and not (set(kinds) == {"at_least", "at_most"}):
        raise ClaimsError(f"{where}: [claim.paper] needs exactly one of {', '.join(KINDS)} (got {kinds or 'none'})")
    if "shown" in stated:
        return None, None, str(stated["shown"])
    if "order" in stated:
        if stated["order"] not in ORDERS:
            raise ClaimsError(f"{where}: order must be one of {', '.join(ORDERS)}")
        return None, stated["order"], None
    if "value" in stated:
        x = float(stated["value"])
        return (x, x), None, None
    if "between" in stated:
        lo, hi = (float(v) for v in stated["between"])
    else:
        lo, hi = float(stated.get("at_least", -float("inf"))), float(stated.get("at_most", float("inf")))
    if lo > hi:
        raise ClaimsError(f"{where}: the paper's interval is empty ({lo} > {hi})")
    return (lo, hi), None, None


def parse(text: str, origin: str) -> list[Claim]:
    """The claims of one claims.toml (``origin`` names it in errors)."""
    doc = tomllib.loads(text)
    out: list[Claim] = []
    for i, entry in enumerate(doc.get("claim", [])):
        where = f"{origin}: claim {entry.get('id', i)!r}"
        stated = dict(entry.get("paper", {}))
        interval, order, shown = _interval(where, stated)
        if shown is None and not str(stated.get("source", "")).strip():
            raise ClaimsError(f"{where}: a judged claim cites its number's source ([claim.paper] source)")
        scale = float(entry.get("scale", 1.0))
        spread, written = _precision(where, stated, interval, scale)
        members = entry.get("members")
        if order is not None and members is None:
            members = "all"
        if members is not None and members != "all" and not (isinstance(members, int) and members > 0):
            raise ClaimsError(f"{where}: members must be \"all\" or a positive count")
        if isinstance(members, int) and not str(entry.get("members_source", "")).strip():
            raise ClaimsError(f"{where}: a count of members cites where the paper states it (members_source)")
        try:
            out.append(Claim(
                id=entry["id"], experiment=entry["experiment"], quote=entry["quote"], line=int(entry["line"]),
                quantity=entry["quantity"], metric=entry["metric"], interval=interval, order=order, shown=shown,
                spread=spread, source=str(stated.get("source", "")),
                unit=entry.get("unit", ""), scale=scale, format=entry.get("format", ".3g"),
                members=members, members_source=entry.get("members_source", ""), written=written,
            ))
        except KeyError as missing:
            raise ClaimsError(f"{where}: missing {missing}") from None
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        raise ClaimsError(f"{origin}: duplicate claim ids")
    return out


def claims_file(paper_key: str) -> Path:
    return Path(__file__).resolve().parent / paper_key / "claims.toml"


@cache
def of_paper(paper_key: str) -> tuple[Claim, ...]:
    """The paper's claims (none when its package has no claims.toml yet)."""
    path = claims_file(paper_key)
    if not path.exists():
        return ()
    return tuple(parse(path.read_text(), str(path.relative_to(path.parents[3]))))


def of_experiment(paper_key: str, experiment: str) -> tuple[Claim, ...]:
    return tuple(c for c in of_paper(paper_key) if c.experiment == experiment)


def normalise(text: str) -> str:
    return " ".join(text.split()).lower()


def quote_found(claim: Claim, paper_text: str, span: int = 6) -> bool:
    """Does the paper's text hold ``claim.quote`` starting on ``claim.line``
    (continuing over at most ``span`` lines; whitespace and case aside)?"""
    lines = paper_text.splitlines()
    if not 1 <= claim.line <= len(lines):
        return False
    first = normalise(lines[claim.line - 1])
    window = normalise(" ".join(lines[claim.line - 1:claim.line - 1 + span]))
    quote = normalise(claim.quote)
    # It starts on that line: its first words are there, and the whole is in the window.
    head = " ".join(quote.split()[:3])
    return quote in window and (head in first or quote in first)
