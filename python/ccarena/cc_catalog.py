"""``ccarena ccs [NAME]``: the congestion controls compiled into the
simulator, each with its one-line description (``CCA_DESCRIPTION`` in
``cc/<name>.c``, the one place it is written) and its parameters (the
algorithm's ``CCA_PARAMS`` table, read through ``scenario.param_specs``:
the keys, units, defaults and limits a scenario's ``params`` take)."""

from __future__ import annotations

import textwrap

from .errors import ScenarioError
from .scenario import PARAM_UNITS, ParamSpec, param_specs

#: Width the overview wraps parameter lists to.
WIDTH = 100


def _default(spec: ParamSpec) -> str:
    value = spec.human(spec.default)
    if isinstance(value, float):  # whole ppm: at most 6 decimals, none trailing
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return f'"{value}"' if isinstance(value, str) else str(value)


def _setting(spec: ParamSpec) -> str:
    return f"{spec.key}={_default(spec)}"


def _base(name: str, specs: dict[str, list[ParamSpec]]) -> str | None:
    """The algorithm whose parameter table ``name``'s starts with (the
    derivatives of bbr_core.h start with BBR's rows), if any: the longest
    such table; among those, the one whose defaults differ least (bbr3_tuned
    is bbr3's table with two defaults changed, not bbr2's with seven), then
    the first name. Of equal tables only an earlier name can be the base,
    so that no two describe each other."""
    keys = [s.key for s in specs[name]]

    def rank(other: str) -> tuple[int, int]:
        differ = sum(a.default != b.default for a, b in zip(specs[name], specs[other]))
        return len(specs[other]), -differ

    best = None
    for other, its in specs.items():
        theirs = [s.key for s in its]
        if other == name or not theirs or keys[: len(theirs)] != theirs:
            continue
        if len(theirs) == len(keys) and other > name:
            continue  # equal tables: only an earlier name is the base
        if best is None or rank(other) > rank(best):
            best = other
    return best


def _parameters(name: str, specs: dict[str, list[ParamSpec]]) -> str:
    """``name``'s parameters with their defaults, in few words: those of
    the algorithm its table extends are named by that algorithm, with the
    defaults that differ."""
    own = specs[name]
    if not own:
        return "no parameters"
    base = _base(name, specs)
    if base is None:
        return f"{len(own)} parameters: " + ", ".join(map(_setting, own))
    inherited = specs[base]
    text = f"{len(own)} parameters: {base}'s {len(inherited)}"
    differ = [_setting(s) for s, b in zip(own, inherited) if s.default != b.default]
    if differ:
        text += " (defaults that differ: " + ", ".join(differ) + ")"
    extra = own[len(inherited):]
    if extra:
        text += ", and " + ", ".join(map(_setting, extra))
    return text


def overview() -> str:
    """Every algorithm: name and description, then its parameters with
    their defaults (wrapped)."""
    from . import _core

    names = sorted(_core.cc_names())
    specs = {name: param_specs(name) for name in names}
    width = max(map(len, names)) + 2
    lines = []
    for name in names:
        lines.append(f"{name.ljust(width)}{_core.cc_description(name)}")
        lines += textwrap.wrap(_parameters(name, specs), WIDTH, initial_indent=" " * width,
                               subsequent_indent=" " * (width + 2), break_on_hyphens=False)
    lines += ["", 'Set per flow: params = { alpha = "3ms", beta = 0.01 }. `ccarena ccs NAME`: every parameter '
                  "of NAME with its unit, default and limits."]
    return "\n".join(lines)


def details(name: str) -> str:
    """One algorithm: its description and a table of every parameter
    (scenario key, unit, default, limits, name in the C table)."""
    from . import _core

    known = sorted(_core.cc_names())
    cc = name.replace("-", "_")  # as a scenario reads "bbr3-tuned"
    if cc not in known:
        raise ScenarioError("ccs", f"unknown congestion control {name!r} (known: {', '.join(known)})")
    lines = [f"{cc}: {_core.cc_description(cc)}", ""]
    specs = param_specs(cc)
    if not specs:
        return "\n".join(lines + ["no parameters"])
    rows = [("parameter", "unit", "default", "limits", "C name")]
    rows += [(s.key, PARAM_UNITS[s.kind], _default(s), s.limits(), s.name) for s in specs]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    table.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + table + ["", f"Per flow in a scenario: [[flow]] cc = \"{cc}\", "
                                           f"params = {{ {specs[-1].key} = {_default(specs[-1])} }}"])
