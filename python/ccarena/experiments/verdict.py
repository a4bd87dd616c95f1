"""The one verdict engine: a claim (claims.py) and per-seed values in, a
row of the "paper vs ccarena" table out, with the rule it applied written
beside it in words and numbers.

The rule (docs/experiments.md, "When a row agrees"), the same for every
claim of every paper:

    A number agrees with the paper when the distance from our mean over
    the seeds to what the paper states (its value, its range, or the side
    of its bound) is at most the larger of the paper's spread and half our
    seed range (max - min over at least MIN_SEEDS seeds, / 2). The
    paper's spread of a number it writes without one is half a unit of
    its last digit ("2 percent": +-0.5%); a constant of the design, a
    range and a bound have none (claims.py).

    An order ("increasing" over a set) is that rule applied to each step:
    the per-seed differences between neighbours against ">= 0" (or "<= 0",
    or "= 0" for "constant": independent of the member); an order the
    paper states of several sequences at once (the same trend at 10 and
    40 ms) is judged on every step of each, none across.
    A number measured on a grid (a time in whole bins: Measured.resolution)
    also agrees within half a step of it.
    A number some seed did not measure (NaN) is shown, not judged.
    A claim about a set agrees when every member agrees, or, where the
    paper states a count ("in 9 of 10"), when that many do.
    A word the paper gives no number for is shown, not judged.
    Where an alternative metric the paper does not rule out flips the
    verdict, the row says "depends on the metric" instead.

Experiment modules put what they measured in ``Report.measured[claim id]``
(:class:`Measured`); :func:`rows` judges every claim of the experiment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from .claims import Claim
from .framework import MIN_SEEDS, Comparison, LinuxCell

if TYPE_CHECKING:
    from .linux import Record


@dataclass(frozen=True)
class Measured:
    """What an experiment measured for one claim: per-seed ``values``, or,
    for a claim about a set, ``members`` (name -> per-seed values, in the
    order an ``order`` claim runs over). ``alternatives``: the same
    measured under another reasonable metric (name -> Measured) where the
    paper's definition leaves room. ``note``: numbers from the same runs
    that explain the result (shown beside a differing row)."""

    values: Sequence[float] = ()
    members: Mapping[str, Sequence[float]] = field(default_factory=dict)
    alternatives: Mapping[str, Measured] = field(default_factory=dict)
    note: str = ""
    #: For an ``order`` the paper states of several sequences at once (the
    #: same trend at 10 and at 40 ms): name -> members, each an order of
    #: its own; every step of every chain is judged (none across chains).
    chains: Mapping[str, Mapping[str, Sequence[float]]] = field(default_factory=dict)
    #: The step of the grid the quantity is measured on, in the claim's
    #: units (a time counted in whole 1-s bins): numbers closer than half
    #: of it cannot be told apart, so the rule allows that much too. 0: none.
    resolution: float = 0.0


@dataclass(frozen=True)
class _Judged:
    agrees: bool | None
    ours: str
    spread: str
    rule: str


#: A point this run did not measure (a --quick run leaves some out).
_NOT_MEASURED = _Judged(None, "-", "", "not measured in this run")


def _stats(values: Sequence[float]) -> tuple[float, float, float, float]:
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.min()), float(arr.max()), float(arr.max() - arr.min()) / 2


def _distance(mean: float, lo: float, hi: float) -> float:
    return lo - mean if mean < lo else (mean - hi if mean > hi else 0.0)


def _paper_spread(claim: Claim) -> str:
    """The paper's spread as the rule prints it, saying where it comes from
    when it is the last digit of the number the paper writes."""
    text = claim.show(abs(claim.spread))
    return f"{text}, \"{claim.written}\" to its last digit" if claim.written else text


def _half_step(claim: Claim, resolution: float) -> str:
    """", half our resolution x" where the quantity is measured on a grid."""
    return f", half our resolution {claim.show(resolution / 2)}" if resolution > 0 else ""


def _number(claim: Claim, values: Sequence[float], interval: tuple[float, float], stated: str,
            *, signed: bool = False, resolution: float = 0.0) -> _Judged:
    """The rule for one number against the paper's interval."""
    if len(values) == 0:
        return _NOT_MEASURED
    missing = int(np.count_nonzero(~np.isfinite(np.asarray(values, dtype=float))))
    if missing:
        # A seed that did not measure it (NaN): the rest are shown, none judged.
        shown = _number(claim, [v for v in values if np.isfinite(v)] or [float("nan")], interval, stated,
                        signed=signed, resolution=resolution) if missing < len(values) else None
        return _Judged(None, shown.ours if shown else "not measured", shown.spread if shown else "",
                       f"not judged: {missing} of {len(values)} seeds did not measure it")
    mean, lo_v, hi_v, half = _stats(values)
    show = lambda x: claim.show(x, signed=signed)  # noqa: E731
    spread = f"{show(lo_v)} to {show(hi_v)} ({len(values)} seeds)" if len(values) > 1 else ""
    if len(values) < MIN_SEEDS:
        return _Judged(None, show(mean), spread, f"not judged: {len(values)} seed(s), a verdict needs {MIN_SEEDS}")
    dist = _distance(mean, *interval)
    allowed = max(abs(claim.spread), half, resolution / 2)
    agrees = dist <= allowed + 1e-12 * max(1.0, abs(mean))
    words = "agrees" if agrees else "differs"
    dist_text, allowed_text = claim.show_apart(dist, allowed)
    rule = (f"paper {stated}; ours {show(mean)}, seeds {show(lo_v)} to {show(hi_v)}; distance "
            f"{dist_text} {'<=' if agrees else '>'} {allowed_text} = max(paper spread "
            f"{_paper_spread(claim)}, our half-range {claim.show(half)}{_half_step(claim, resolution)}): {words}")
    return _Judged(agrees, show(mean), spread, rule)


def _set(claim: Claim, members: Mapping[str, Sequence[float]], resolution: float = 0.0) -> _Judged:
    """A number claim over every member of a set (or the paper's count)."""
    parts = {name: _number(claim, vals, claim.interval, claim.stated(), resolution=resolution)
             for name, vals in members.items()}
    return _combine(claim, parts, "member")


def _steps(claim: Claim, members: Mapping[str, Sequence[float]], prefix: str = "",
           resolution: float = 0.0) -> dict[str, _Judged]:
    """Rule 1 on each step of an order: the per-seed differences between
    neighbouring members against ">= 0" (or "<= 0", or "= 0")."""
    names = list(members)
    if len(names) < 2:
        raise ValueError(f"claim {claim.id}: an order needs at least two members")
    bound, stated = {"increasing": ((0.0, float("inf")), ">= 0"), "decreasing": ((-float("inf"), 0.0), "<= 0"),
                     "constant": ((0.0, 0.0), "= 0")}[claim.order]
    parts = {}
    for a, b in zip(names, names[1:]):
        xa, xb = np.asarray(members[a], float), np.asarray(members[b], float)
        if len(xa) != len(xb):
            raise ValueError(f"claim {claim.id}: members {a!r} and {b!r} have different seed counts")
        parts[f"{prefix}{a} -> {b}"] = _number(claim, list(xb - xa), bound, stated, signed=True,
                                               resolution=resolution)
    return parts


def _ordered_means(claim: Claim, members: Mapping[str, Sequence[float]]) -> str:
    join = {"increasing": " < ", "decreasing": " > ", "constant": " -> "}[claim.order].join
    return join([claim.show(float(np.mean(members[n]))) for n in members]) + f" ({', '.join(members)})"


def _order(claim: Claim, members: Mapping[str, Sequence[float]], resolution: float = 0.0) -> _Judged:
    if not members:
        return _NOT_MEASURED
    judged = _combine(claim, _steps(claim, members, resolution=resolution), "step")
    return _Judged(judged.agrees, _ordered_means(claim, members), judged.spread, judged.rule)


def _chains(claim: Claim, chains: Mapping[str, Mapping[str, Sequence[float]]], resolution: float = 0.0) -> _Judged:
    """An order over several chains: every step of each, judged whole."""
    parts = {k: v for name, members in chains.items()
             for k, v in _steps(claim, members, f"{name}: ", resolution).items()}
    judged = _combine(claim, parts, "step")
    ours = "; ".join(f"{name}: {_ordered_means(claim, members)}" for name, members in chains.items())
    return _Judged(judged.agrees, ours, judged.spread, judged.rule)


def _combine(claim: Claim, parts: Mapping[str, _Judged], what: str) -> _Judged:
    verdicts = [p.agrees for p in parts.values()]
    detail = "; ".join(f"{name}: {p.rule}" for name, p in parts.items())
    ours = "; ".join(f"{name}: {p.ours}" for name, p in parts.items())
    spread = "; ".join(f"{name}: {p.spread}" for name, p in parts.items() if p.spread)
    if any(v is None for v in verdicts):
        return _Judged(None, ours, spread, detail)
    n_ok = sum(bool(v) for v in verdicts)
    need = len(verdicts) if claim.members in ("all", None) else int(claim.members)
    agrees = n_ok >= need
    head = (f"every {what} must agree" if need == len(verdicts)
            else f"{need} of {len(verdicts)} {what}s must agree ({claim.members_source})")
    return _Judged(agrees, ours, spread,
                   f"{head}; {n_ok} of {len(verdicts)} do: {'agrees' if agrees else 'differs'}. {detail}")


def _judge(claim: Claim, measured: Measured) -> _Judged:
    res = measured.resolution
    if claim.order is not None:
        return _chains(claim, measured.chains, res) if measured.chains else _order(claim, measured.members, res)
    if measured.members:
        return _set(claim, measured.members, res)
    return _number(claim, measured.values, claim.interval, claim.stated(), resolution=res)


def _shown(claim: Claim, measured: Measured) -> _Judged:
    if not measured.members and len(measured.values) == 0:
        return _Judged(None, "-", "", f"not measured in this run; shown, not judged: {claim.shown}")
    if measured.members:
        parts = {n: _stats(v) for n, v in measured.members.items()}
        ours = "; ".join(f"{n}: {claim.show(s[0])}" for n, s in parts.items())
        spread = "; ".join(f"{n}: {claim.show(s[1])} to {claim.show(s[2])}" for n, s in parts.items()
                           if len(measured.members[n]) > 1)
    else:
        mean, lo, hi, _ = _stats(measured.values)
        ours = claim.show(mean)
        spread = f"{claim.show(lo)} to {claim.show(hi)} ({len(measured.values)} seeds)" if len(measured.values) > 1 else ""
    return _Judged(None, ours, spread, f"shown, not judged: {claim.shown}")


def judge(claim: Claim, measured: Measured) -> Comparison:
    """One claim's row."""
    quote = f"\"{claim.quote}\" (L{claim.line})"
    paper = quote if not claim.judged else f"{quote}: {claim.stated()}"
    if not claim.judged:
        j = _shown(claim, measured)
        return Comparison(claim.quantity, paper, j.ours, j.spread, None, measured.note, rule=j.rule, claim=claim.id)
    j = _judge(claim, measured)
    rule = j.rule
    depends = False
    if j.agrees is not None and measured.alternatives:
        alt = {name: _judge(claim, m) for name, m in measured.alternatives.items()}
        flips = {name: a for name, a in alt.items() if a.agrees is not None and a.agrees != j.agrees}
        rule += "".join(f" | with {name}: {a.ours}; {a.rule}" for name, a in alt.items())
        if flips:
            depends = True
            rule = (f"depends on the metric: {'agrees' if j.agrees else 'differs'} with {claim.metric}, "
                    f"{'differs' if j.agrees else 'agrees'} with {', '.join(flips)}. " + rule)
    agrees = None if depends else j.agrees
    reason = measured.note
    if agrees is False and not reason:
        reason = rule
    return Comparison(claim.quantity, paper, j.ours, j.spread, agrees, reason, rule=rule, claim=claim.id,
                      metric_dependent=depends)


# --- The simulator against real Linux (linux.py records what Linux measured).

#: Repetitions each engine needs before the simulator is compared with Linux.
MIN_REPS = 3


def _series(m: Measured) -> dict[str, list[float]]:
    """The numbers a measurement holds, by name: the value, each member,
    or each member of each chain (an order compares its members, not its
    steps)."""
    if m.chains:
        return {f"{c}: {k}": list(v) for c, mem in m.chains.items() for k, v in mem.items()}
    if m.members:
        return {k: list(v) for k, v in m.members.items()}
    return {"": list(m.values)} if len(m.values) else {}


def sim_vs_linux(claim: Claim, sim: Measured, live: Measured) -> tuple[str, str]:
    """("consistent" | "differ" | "not compared", the rule in words and
    numbers). The verdict rule, two-sided: the simulator's mean and
    Linux's may be apart by at most the largest of the simulator's
    half-range, Linux's half-range and the paper's stated spread; for a
    set, every member."""
    s, l = _series(sim), _series(live)
    common = [k for k in s if k in l]
    if not common:
        return "not compared", "not compared: Linux measured none of what the simulator did"
    parts, differ = [], False
    for k in common:
        a, b = np.asarray(s[k], float), np.asarray(l[k], float)
        name = f"{k}: " if k else ""
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            return "not compared", f"not compared: {name or 'a '}repetition measured nothing (NaN)"
        if min(len(a), len(b)) < MIN_REPS:
            return "not compared", (f"not compared: {len(a)} simulator seed(s), {len(b)} Linux repetition(s); "
                                    f"a comparison needs {MIN_REPS} of each")
        ha, hb = float(a.max() - a.min()) / 2, float(b.max() - b.min()) / 2
        dist = abs(float(a.mean()) - float(b.mean()))
        step = max(sim.resolution, live.resolution)
        allowed = max(ha, hb, abs(claim.spread), step / 2)
        ok = dist <= allowed + 1e-12 * max(1.0, abs(float(a.mean())))
        differ |= not ok
        sim_text, linux_text = claim.show_apart(float(a.mean()), float(b.mean()))
        dist_text, allowed_text = claim.show_apart(dist, allowed)
        parts.append(f"{name}simulator {sim_text}, Linux {linux_text}; distance "
                     f"{dist_text} {'<=' if ok else '>'} {allowed_text} = max(simulator half-range "
                     f"{claim.show(ha)}, Linux half-range {claim.show(hb)}, paper spread {_paper_spread(claim)}"
                     f"{_half_step(claim, step)})")
    if differ:
        return "differ", "simulator and Linux differ: " + "; ".join(parts)
    return "consistent", "consistent: " + "; ".join(parts)


def linux_cell(claim: Claim, sim: Measured, record: Record | None, quick: bool) -> LinuxCell:
    """A claim's real-Linux column from the newest record of its experiment."""
    if record is None:
        return LinuxCell(rule="no live pass of this experiment is recorded (ccarena reproduce NAME --live)")
    if record.cannot:
        return LinuxCell(status="cannot carry", rule=f"the testbed cannot carry it: {record.cannot}",
                         source=record.where)
    live = record.measured.get(claim.id)
    if live is None:
        return LinuxCell(status="not run live", rule=f"{record.where} has no measurement of this claim",
                         source=record.where)
    j = _judge(claim, live) if claim.judged else _shown(claim, live)
    verdict = {True: "agrees", False: "differs", None: "-"}[j.agrees]
    if record.quick != quick:
        status, rule = "not compared", (f"not compared: Linux ran {'--quick' if record.quick else 'full-length'} "
                                        f"runs, this report {'--quick' if quick else 'full-length'} ones")
    else:
        status, rule = sim_vs_linux(claim, sim, live)
    return LinuxCell(j.ours, j.spread, verdict, status, f"Linux against the paper: {j.rule}. Simulator against "
                     f"Linux: {rule}", record.where)


def rows(claims: Sequence[Claim], measured: Mapping[str, Measured], experiment: str,
         linux: Record | None = None, quick: bool = False) -> list[Comparison]:
    """Every claim of an experiment, judged on what it measured, with
    real Linux beside it (``linux``: the newest record of the experiment,
    linux.py). A claim it did not measure, or a measurement no claim
    names, is a bug."""
    ids = {c.id for c in claims}
    unknown = set(measured) - ids
    if unknown:
        raise ValueError(f"{experiment}: measured values for claims not in its claims table: {sorted(unknown)}")
    missing = [c.id for c in claims if c.id not in measured]
    if missing:
        raise ValueError(f"{experiment}: claims not measured: {missing}")
    return [replace(judge(c, measured[c.id]), linux=linux_cell(c, measured[c.id], linux, quick)) for c in claims]
