"""Which congestion control a name means, and what the kernel calls it.

    cubic, reno, bbr        the kernel's own (built in or a tcp_<name> module)
    bbr@ccarena, bbq, ...   ours: cc/<name>.c compiled to BPF struct_ops and
                            registered as cc_<name> (never clashes with the
                            kernel's names)
    cc_bbr                  the same as bbr@ccarena

A plain name that is not one of the kernel's built-ins but has a cc/<name>.c
(e.g. ``bbq``) is ours. Anything else is taken to be the kernel's, loaded
with ``modprobe tcp_<name>`` if needed (``vegas``, ``dctcp``...).

Per-flow parameters exist only for ours, named and written as a scenario's
``params`` (``alpha = "3ms"``, ``beta = "1%"``; read by
ccarena.scenario.resolve_params, the one parser of both), or as the full
integer vector in the table's order (what a resolved scenario carries).
Non-default values compile a variant with those values as its defaults,
registered under its own name ``cc_<name>_<hash>`` (hash of the values; at
most 15 characters in all, the kernel's TCP_CA_NAME_MAX - 1), so flows of
one run may use different values side by side.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import paths
from .errors import KernelError

if TYPE_CHECKING:
    from ..scenario import ParamSpec

KERNEL_BUILTINS = ("bbr", "cubic", "reno")
OURS_SUFFIX = "@ccarena"
PREFIX = "cc_"
# TCP_CA_NAME_MAX is 16 including the NUL.
KERNEL_NAME_MAX = 15
_HASH_MIN = 4
_NAME_RE = re.compile(r"^[a-z0-9_]+$")

#: By scenario key in scenario units ({"alpha": "3ms"}), or the full vector.
ParamsArg = Mapping[str, Any] | Sequence[int] | None
#: Where a parameter's error points by default: ``params.alpha``.
PARAMS_FIELD = "params."


@dataclass(frozen=True)
class Target:
    """A resolved congestion-control request."""

    spec: str  # as the caller wrote it, e.g. "bbr@ccarena"
    ours: bool  # cc/<source>.c through BPF, else the kernel's own
    source: str  # cc/<source>.c stem, or the kernel's module name
    kernel_name: str  # what TCP_CONGESTION / the sysctl takes
    params: tuple[int, ...] = ()  # full vector in index order; () = defaults
    param_names: tuple[str, ...] = ()  # scenario keys, in index order
    changed: tuple[tuple[str, Any], ...] = ()  # the non-default values, as a scenario writes them

    def settings(self) -> str:
        """The non-default values as a scenario writes them: ``alpha=1ms beta=0.02``."""
        return " ".join(f"{k}={v}" for k, v in self.changed)

    def describe(self) -> str:
        """The spec with its settings (``kernel list``'s name column)."""
        return f"{self.spec} {self.settings()}" if self.changed else self.spec


def our_algorithms() -> list[str]:
    """Stems of cc/*.c: every algorithm we can compile to BPF."""
    return sorted(p.stem for p in paths.cc_dir().glob("*.c"))


def resolve(spec: str, params: ParamsArg = None, *, field_prefix: str = PARAMS_FIELD) -> Target:
    """Map a scenario's ``cc`` value (and its params) to a Target.

    Raises KernelError for an unknown name, bad parameters (named
    ``field_prefix + key``, e.g. ``params.alpha``), or parameters on a
    kernel algorithm.
    """
    name = spec.strip()
    ours = our_algorithms()
    if name.endswith(OURS_SUFFIX):
        source = name[: -len(OURS_SUFFIX)]
        if source not in ours:
            raise KernelError(f"unknown congestion control '{spec}' (ccarena's: {_known(ours)})")
        return _ours(spec, source, params, field_prefix)
    if name.startswith(PREFIX) and name[len(PREFIX) :] in ours:
        return _ours(spec, name[len(PREFIX) :], params, field_prefix)
    if name in ours and name not in KERNEL_BUILTINS:
        return _ours(spec, name, params, field_prefix)
    if not _NAME_RE.match(name) or len(name) > KERNEL_NAME_MAX:
        raise KernelError(f"unknown congestion control '{spec}' (ccarena's: {_known(ours)}; kernel: e.g. cubic, reno, bbr)")
    if _has_values(params):
        raise KernelError(
            f"congestion control '{spec}' is the kernel's, which takes no per-flow parameters; "
            f"use '{spec}{OURS_SUFFIX}' for ccarena's port"
            if name in ours
            else f"congestion control '{spec}' is the kernel's, which takes no per-flow parameters"
        )
    return Target(spec=spec, ours=False, source=name, kernel_name=name)


def _known(ours: list[str]) -> str:
    return ", ".join(f"{n}{OURS_SUFFIX}" if n in KERNEL_BUILTINS else n for n in ours) or "none"


def _has_values(params: ParamsArg) -> bool:
    return bool(params) and params is not None


def _ours(spec: str, source: str, params: ParamsArg, field_prefix: str) -> Target:
    base = PREFIX + source
    if len(base) > KERNEL_NAME_MAX:
        raise KernelError(f"'{source}': kernel name '{base}' is longer than {KERNEL_NAME_MAX} characters")
    vector, names, changed = _param_vector(source, params, field_prefix)
    if not vector:
        return Target(spec=spec, ours=True, source=source, kernel_name=base)
    room = KERNEL_NAME_MAX - len(base) - 1
    if room < _HASH_MIN:
        raise KernelError(
            f"'{source}': name too long for a parameter variant "
            f"(cc_{source}_<hash> must fit in {KERNEL_NAME_MAX} characters); use the defaults"
        )
    digest = hashlib.sha256(",".join(map(str, vector)).encode()).hexdigest()[: min(6, room)]
    return Target(
        spec=spec,
        ours=True,
        source=source,
        kernel_name=f"{base}_{digest}",
        params=vector,
        param_names=names,
        changed=changed,
    )


def _param_specs(source: str) -> list[ParamSpec]:
    from ..scenario import param_specs

    try:
        return param_specs(source)
    except ValueError as err:
        raise KernelError(
            f"'{source}': parameters need its table from the simulator, which does not know it "
            f"(rebuild with `make build`): {err}"
        ) from None


def _param_vector(
    source: str, params: ParamsArg, field_prefix: str
) -> tuple[tuple[int, ...], tuple[str, ...], tuple[tuple[str, Any], ...]]:
    """(full vector, scenario keys, non-default values in scenario units);
    all () when every value is the default."""
    if not params:
        return (), (), ()
    specs = _param_specs(source)
    if isinstance(params, Mapping):
        from ..errors import ScenarioError
        from ..scenario import resolve_params

        try:
            values, _ = resolve_params(source, params, field_prefix)
        except ScenarioError as err:
            raise KernelError(str(err)) from None
    else:
        if len(params) != len(specs):
            raise KernelError(f"'{source}': expected {len(specs)} parameter values in index order, got {len(params)}")
        values = [_u64(source, spec.key, v) for spec, v in zip(specs, params, strict=True)]
    if values == [spec.default for spec in specs]:
        return (), (), ()
    changed = tuple((spec.key, spec.human(v)) for spec, v in zip(specs, values, strict=True) if v != spec.default)
    return tuple(values), tuple(spec.key for spec in specs), changed


def _u64(source: str, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise KernelError(f"'{source}': parameter '{key}' must be an integer in [0, 2^64), got {value!r}")
    return value
