"""A live pass's finished runs, kept as they finish so that it resumes.

A ``--live`` pass runs one live run after another, and some take many
hours (blog-fairness-map, ~21 h at three repetitions). Each run is stored
the moment it finishes, by default in the reproduction's directory:

    DIR/live-runs/NAME/<digest>.npz

(``--live-store RUNS`` puts them in RUNS/NAME/ instead, for instance in a
directory committed with the project, so that a pass longer than a
working session continues on another machine of the same kernel).

written whole or not at all (rundir.atomic_file). The digest covers
everything that decides what the run measures:

- the scenario exactly as the live engine runs it (resolved, its seed
  included; the simulator's host model is not in it),
- the columns the analysis reads (they also choose the bottleneck),
- the live engine's code: ``python/ccarena/live/``, the kernel build of
  our algorithms (``python/ccarena/kernel/``, ``cc/``) and the delay
  line (``crates/delayline/src/``),
- the kernel's release.

``ccarena reproduce NAME --live --out DIR`` again, after an interruption
(Ctrl-C, a reboot, the end of a working day), reuses every stored run and
makes only the others; a changed engine, algorithm or kernel makes them
all again. Stored runs are never removed (the directory is a container,
rundir.py); ``rm -r DIR/live-runs`` starts afresh.

A file holds the run's summary (JSON, with the key, the day it ran and
its wall time) and its columns as arrays; it is read without pickle. One
that cannot be read is run again.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import platform
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ..rundir import atomic_file
from .framework import Outcome, RunSpec

#: The directory of stored runs inside a reproduction's directory, unless
#: ``--live-store`` names another.
DIRNAME = "live-runs"

_ROOT = Path(__file__).resolve().parents[3]
#: What the live engine runs, besides the scenario (module docstring).
_CODE = (("python/ccarena/live", "*.py"), ("python/ccarena/kernel", "*.py"), ("cc", "*"),
         ("crates/delayline/src", "*.rs"))


def _files() -> Iterator[Path]:
    for folder, pattern in _CODE:
        yield from sorted(p for p in (_ROOT / folder).rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)


@cache
def code_id() -> str:
    """A digest of the live engine's code (:data:`_CODE`) and the kernel's release."""
    h = hashlib.sha256(platform.release().encode())
    for path in _files():
        h.update(str(path.relative_to(_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def digest(spec: RunSpec) -> str:
    """The name of ``spec``'s stored run (``spec`` as the live engine runs
    it, linux.on_linux): 32 hex digits."""
    from ..live.engine import load_live_scenario

    config = load_live_scenario(dict(spec.scenario)).config
    text = json.dumps({"config": config, "flow_columns": list(spec.flow_columns),
                       "link_columns": list(spec.link_columns), "code": code_id()},
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def path_of(runs: Path, experiment: str, spec: RunSpec) -> Path:
    """Where ``spec``'s run of ``experiment`` is kept in the directory of
    kept runs ``runs``."""
    return Path(runs) / experiment / f"{digest(spec)}.npz"


def store(path: Path, outcome: Outcome, date: str | None = None) -> None:
    """Keep ``outcome`` at ``path``, whole or not at all, as made on
    ``date`` (the pass's day, YYYY-MM-DD; default today)."""
    meta = {"key": outcome.key, "summary": outcome.summary, "wall_s": outcome.wall_s,
            "date": date or datetime.date.today().isoformat()}
    arrays: dict[str, Any] = {"meta": np.array(json.dumps(meta, sort_keys=True)), "t_s": outcome.t_s}
    arrays.update({f"flow/{k}": v for k, v in outcome.flow.items()})
    arrays.update({f"link/{k}": v for k, v in outcome.link.items()})
    with atomic_file(path) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)  # small enough to commit (a 600-s run: ~10 kB)


def load(path: Path) -> tuple[Outcome, str] | None:
    """The stored run at ``path`` and the day it ran, or None if there is
    none (or it cannot be read: it is run again)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            flow = {k[len("flow/"):]: z[k] for k in z.files if k.startswith("flow/")}
            link = {k[len("link/"):]: z[k] for k in z.files if k.startswith("link/")}
            t_s = z["t_s"]
        return Outcome(str(meta["key"]), meta["summary"], t_s, flow, link, float(meta["wall_s"])), str(meta["date"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
