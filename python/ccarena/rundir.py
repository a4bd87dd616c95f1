"""Where ccarena writes: one rule for every command, and never at the cost
of a user's data.

**The rule.** Every command that writes names one output with ``--out``
(a directory, or for ``report`` a file). ccarena writes there only if it
is absent, an empty directory, or the output of the same kind of command
(its marker says so); anything else — a user's directory, a run directory
given to ``reproduce``, the directory holding the scenario, ``.``, a
file, an unwritable place, a name too long for the file system — is
refused before any work, with one line ``--out: ...`` (exit status 2).
ccarena never writes into a directory it replaces whole (a run, an
experiment, a comparison) except while building it, and never removes
or overwrites anything it cannot prove it wrote.

Two sorts of output directory (:data:`KINDS`):

- replaced whole (``run``, ``experiment``, ``compare``): built in a
  temporary directory next to the target and renamed into place at the
  end, so a failed or interrupted command leaves nothing half-written;
  an existing one is replaced only when it holds nothing ccarena did not
  write (the marker lists every file);
- containers (``sweep``, ``scorecard``, ``reproduce``): created with their
  marker and then only added to (a sweep's points, a reproduction's
  experiment directories), never removed.

Temporaries are directories named ``.<name>.ccarena-tmp-<pid>-<random>``
(``ccarena-old`` while swapping) that hold a marker from their first
instant; a file is written inside one and renamed out of it. One left by
a process that was killed outright (SIGKILL, power loss) is removed by
the next ccarena that writes next to it, once its pid is gone and only if
its marker, read back, says ccarena wrote it: a user's file or directory
with a similar name is never touched.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from . import signals
from .errors import ScenarioError

#: The marker of a directory replaced whole (a run, an experiment, a
#: comparison). It lists what ccarena wrote there (sorted relative paths,
#: so that two runs of a scenario give the same bytes); a directory
#: holding anything else is not replaced.
MARKER = ".ccarena-run"
#: Output directories replaced whole, by kind (all marked with MARKER,
#: whose ``kind`` tells them apart).
REPLACED = ("run", "experiment", "compare")
#: Containers, by kind, and the marker file that makes a directory one.
CONTAINERS = {"sweep": ".ccarena-sweep", "scorecard": ".ccarena-scorecard", "reproduce": ".ccarena-reproduce"}
#: Every kind of output directory.
KINDS = REPLACED + tuple(CONTAINERS)
#: Our temporaries: .<name>.ccarena-tmp-<pid>-<random> / .<name>.ccarena-old-...
_TEMP = re.compile(r"^\.(?P<name>.+)\.ccarena-(?P<kind>tmp|old)-(?P<pid>\d+)-[A-Za-z0-9_]+$")
#: What the longest temporary adds to an output's name: "." + ".ccarena-old-"
#: + a pid (at most 7 digits on Linux) + "-" + mkdtemp's 8 characters.
_TEMP_OVERHEAD = len("..ccarena-old-") + 7 + 1 + 8


def _read_marker(path: Path) -> dict | None:
    """A marker file's record if ccarena wrote it (JSON saying so), else None."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) and record.get("written_by") == "ccarena" else None


def kind_of(path: Path) -> str | None:
    """The kind of ccarena output ``path`` is (``run``, ``sweep``, ...), or
    None if it is not a directory ccarena wrote."""
    path = Path(path)
    if path.is_symlink() or not path.is_dir():
        return None
    for kind, marker in CONTAINERS.items():
        if (path / marker).is_file():
            return kind
    record = _read_marker(path / MARKER)
    if record is None:
        return None
    kind = record.get("kind")
    if kind in REPLACED:
        return kind
    # Written before markers had a kind: a run or an experiment.
    return "experiment" if (path / "results.json").is_file() else "run"


def is_run_dir(path: Path) -> bool:
    """True if ``path`` is a directory that ccarena wrote and replaces
    whole (it has the marker)."""
    return kind_of(path) in REPLACED


def _contents(directory: Path) -> list[str]:
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if p.name != MARKER or p.parent != directory
    )


def mark(directory: Path, kind: str = "run") -> None:
    """Mark ``directory`` as ccarena's output of ``kind``, listing what is in it now."""
    text = json.dumps({"written_by": "ccarena", "kind": kind, "files": _contents(directory)}, indent=1) + "\n"
    (directory / MARKER).write_text(text, encoding="utf-8")


def _foreign(directory: Path) -> list[str]:
    """What a marked ``directory`` holds beyond what ccarena wrote there."""
    record = _read_marker(directory / MARKER) or {}
    written = record.get("files")
    if not isinstance(written, list):
        return [MARKER]  # unreadable: treat it all as someone else's
    return [name for name in _contents(directory) if name not in set(written)]


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _adoptable(out: Path, entry_ok) -> bool:
    """A container an older ccarena wrote without its marker: ``entry_ok``
    (the container's own test) accepts every entry as ccarena's."""
    return entry_ok is not None and all(entry_ok(entry) for entry in out.iterdir())


def first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline()
    except (OSError, UnicodeDecodeError):
        return ""


def _name_problem(out: Path) -> str | None:
    """A component of ``out`` (or our temporary's name next to it) that is
    too long for the file system."""
    limit = 255  # NAME_MAX of every Linux file system we write to
    for part in out.parts:
        if len(os.fsencode(part)) > limit:
            return f"{part[:24]}... is {len(os.fsencode(part))} bytes, longer than a file name may be ({limit})"
    name_bytes = len(os.fsencode(out.name))
    if name_bytes + _TEMP_OVERHEAD > limit:
        return (f"the name {out.name[:24]}... is {name_bytes} bytes; ccarena needs it at most "
                f"{limit - _TEMP_OVERHEAD} (its temporary next to it adds {_TEMP_OVERHEAD})")
    if len(os.fsencode(str(out.absolute()))) + _TEMP_OVERHEAD > 4000:
        return "the path is longer than the file system allows (4096 bytes)"
    return None


def _inside_problem(out: Path) -> str | None:
    """Why writing ``out`` would write inside a directory ccarena replaces
    whole (a run, an experiment, a comparison), or None."""
    here = Path(os.path.abspath(out)).parent
    for ancestor in (here, *here.parents):
        kind = kind_of(ancestor)
        if kind in REPLACED:
            return (f"{out} is inside the ccarena {kind} directory {ancestor}, which ccarena replaces whole; "
                    "choose a place outside it")
        if kind is not None:
            return None  # inside a container: ccarena only adds to it
    return None


def _creatable_problem(out: Path) -> str | None:
    """Why nothing can be created at ``out`` (its nearest existing ancestor
    is not a directory we can create in), or None."""
    probe = out.parent
    while not probe.exists() and not probe.is_symlink():
        probe = probe.parent
    if not probe.is_dir():
        return f"cannot create {out}: {probe} is not a directory"
    try:
        # Root passes os.access() everywhere; only creating tells (/proc,
        # read-only mounts). The probe is removed at once.
        os.rmdir(tempfile.mkdtemp(prefix=".ccarena-probe-", dir=probe))
    except OSError as err:
        reason = os.strerror(err.errno) if err.errno else str(err)
        return f"cannot create {out}: creating in {probe} fails ({reason})"
    return None


def _problem(out: Path, kind: str, adopt=None) -> str | None:
    """Why ``out`` cannot be (or become) ccarena's output of ``kind``, or None."""
    text = str(out)
    if text in ("", ".") or out.name in ("", ".", ".."):
        return f"{text or repr(text)} names no new directory (give a directory name, e.g. runs/mine)"
    if "\0" in text:
        return "contains a NUL character"
    problem = _name_problem(out)
    if problem is not None:
        return problem
    if out.is_symlink():
        return f"{out} is a symbolic link; give the directory itself"
    if out.exists():
        if not out.is_dir():
            return f"{out} exists and is not a directory"
        found = kind_of(out)
        if found is None and any(out.iterdir()):
            if _adoptable(out, adopt):
                return None
            return (
                f"{out} exists and is not a ccarena {kind} directory (no ccarena marker in it); "
                "it is left alone: choose another --out or empty it yourself"
            )
        if found is not None and found != kind:
            return f"{out} is {_article(found)} directory of ccarena, not {_article(kind)}'s; it is left alone: choose another --out"
        foreign = _foreign(out) if found in REPLACED else []
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            return (
                f"{out} holds files ccarena did not write ({shown}); it is left alone: "
                "move them or choose another --out"
            )
    return _inside_problem(out) or _creatable_problem(out)


def check_target(out: Path, kind: str = "run", adopt: Callable[[Path], bool] | None = None) -> None:
    """Fail early (before any work, nothing written) if ``out`` cannot
    become ccarena's output directory of ``kind``. ``adopt``, for a
    container, tells whether an entry of an unmarked directory is one an
    older ccarena wrote there (such a directory is then adopted)."""
    assert kind in KINDS, kind
    try:
        problem = _problem(Path(out), kind, adopt)
    except OSError as err:  # e.g. a parent we may not look into
        problem = f"cannot use {out}: {os.strerror(err.errno) if err.errno else err}"
    if problem is not None:
        raise ScenarioError("--out", problem)


def open_container(out: Path, kind: str, adopt: Callable[[Path], bool] | None = None) -> Path:
    """Create ``out`` as a container of ``kind`` (or check that it is one,
    to add to it); refuses, as :func:`check_target`, anything else."""
    assert kind in CONTAINERS, kind
    out = Path(out)
    check_target(out, kind, adopt)
    out.mkdir(parents=True, exist_ok=True)
    marker = out / CONTAINERS[kind]
    if not marker.is_file():
        write_file_atomic(marker, json.dumps({"written_by": "ccarena", "kind": kind}) + "\n")
    return out


def check_owned_file(path: Path, head: str) -> None:
    """Fail early if ``path`` cannot be written by ccarena: it exists and is
    not a file ccarena wrote (whose first line starts with ``head``),
    it would land inside a directory ccarena replaces whole, or it cannot
    be created."""
    path = Path(path)
    text = str(path)
    if text in ("", ".") or path.name in ("", ".", ".."):
        raise ScenarioError("--out", f"{text or repr(text)} names no file (give a file name, e.g. runs/report.html)")
    try:
        problem = _name_problem(path)
        if problem is None and (path.exists() or path.is_symlink()):
            if not path.is_file() or path.is_symlink() or not first_line(path).startswith(head):
                problem = f"{path} exists and was not written by ccarena; it is left alone"
        problem = problem or _inside_problem(path) or _creatable_problem(path)
    except OSError as err:  # e.g. a parent we may not look into
        problem = f"cannot use {path}: {os.strerror(err.errno) if err.errno else err}"
    if problem is not None:
        raise ScenarioError("--out", problem)


# --------------------------------------------------------------------------
# Temporaries.


def remove_stale_temporaries(parent: Path) -> list[Path]:
    """Remove ccarena's temporaries in ``parent`` whose process is gone
    (left by a kill that Python never saw); the removed paths. Only a
    directory with our name pattern and a marker that ccarena wrote is
    removed: nothing else, whatever its name."""
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP.match(entry.name)
        if not match or entry.is_symlink() or not entry.is_dir() or _alive(int(match["pid"])):
            continue
        if _read_marker(entry / MARKER) is None:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def _temporary(out: Path, kind: str, marked_as: str = "run") -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.ccarena-{kind}-{os.getpid()}-", dir=out.parent))
    mark(tmp, marked_as)
    return tmp


def _remove_own_temporaries(out: Path) -> None:
    # By name, not by variable: a signal may land between mkdtemp and the
    # assignment. Only this process's (its pid is in the name).
    for leftover in out.parent.glob(f".{glob.escape(out.name)}.ccarena-tmp-{os.getpid()}-*"):
        shutil.rmtree(leftover, ignore_errors=True)


@contextmanager
def atomic_dir(out: Path, kind: str = "run") -> Iterator[Path]:
    """Yield a fresh, marked temporary directory; on success it replaces
    ``out`` (which must be absent, empty, or ccarena's output of the same
    ``kind`` holding nothing else), on any failure or signal it is deleted."""
    assert kind in REPLACED, kind
    out = Path(out)
    check_target(out, kind)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out.parent)
    try:
        tmp = _temporary(out, "tmp", kind)
        yield tmp
        mark(tmp, kind)  # whatever the caller did inside, the result is marked
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        with signals.held():  # a signal finds either the old output or the new one
            _swap_into_place(tmp, out, kind)
    except BaseException:
        _remove_own_temporaries(out)
        raise


def write_run_dir(directory: Path, write) -> None:
    """Make ``directory`` (inside a temporary of :func:`atomic_dir`), let
    ``write(directory)`` fill it and mark it as a run: a run inside a
    comparison is a run directory of its own (``ccarena report`` reads it)."""
    directory.mkdir()
    write(directory)
    mark(directory, "run")


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path for ``path``'s contents, inside a marked
    temporary directory next to it; when the block ends without error it
    replaces ``path`` (whole or not at all), on any error it is removed.
    For files written by a library (Parquet, PNG)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent)
    try:
        tmp = _temporary(path, "tmp")
        yield tmp / path.name
        os.chmod(tmp / path.name, 0o644)
        os.replace(tmp / path.name, path)
        shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        _remove_own_temporaries(path)
        raise


def write_file_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed into place)."""
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _swap_into_place(tmp: Path, out: Path, kind: str) -> None:
    # Checked again: the target may have changed while we ran.
    check_target(out, kind)
    if out.is_dir() and kind_of(out) == kind:
        old = _temporary(out, "old", kind)
        os.replace(out, old / out.name)
        try:
            os.replace(tmp, out)
        except BaseException:
            os.replace(old / out.name, out)  # put the earlier output back
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)
        return
    try:
        os.replace(tmp, out)  # absent, or an empty directory (rename replaces it)
    except OSError as err:
        if err.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise ScenarioError("--out", f"{out} was filled by something else while ccarena ran; left alone") from None
        raise
