"""Flows as a person can read them: one by one up to :data:`MAX_SHOWN`
flows; beyond, one group per ``[[flow]]`` entry (its ``count`` flows);
beyond that many entries, one group of all. The goodput plot draws a line
per group (a mean with its min-max band) and ``ccarena run`` prints a row
per group, so both fold a 1000-flow run the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .scenario import ResolvedScenario

#: Up to this many flows are shown one by one (and up to this many
#: entries one by one). Matplotlib draws a 10,000-line legend in minutes,
#: and nobody reads a 1000-row table.
MAX_SHOWN = 16


@dataclass(frozen=True)
class Group:
    #: The ``[[flow]]`` entry (its index), or None for a group of all flows.
    entry: int | None
    #: Indices of its flows (count-expanded, as in summary.json).
    flows: list[int]


def flow_groups(scenario: ResolvedScenario) -> list[Group] | None:
    """The groups of a scenario's flows, or None when it has at most
    :data:`MAX_SHOWN` flows (show each)."""
    n = len(scenario.config["flows"])
    if n <= MAX_SHOWN:
        return None
    entries = scenario.human.get("flow", [])
    if len(entries) > MAX_SHOWN:
        return [Group(None, list(range(n)))]
    groups, first = [], 0
    for k, entry in enumerate(entries):
        count = int(entry.get("count", 1))
        groups.append(Group(k, list(range(first, first + count))))
        first += count
    return groups
