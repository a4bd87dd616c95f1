"""Run directories: all or nothing, and never at the cost of a user's data.

Every directory ccarena writes (a run, an experiment's report) is built in
a temporary directory next to the target and renamed into place at the
end, so a failed or interrupted run leaves no half-written directory. Each
carries a marker file, :data:`MARKER`; an existing target is replaced only
when it has that marker (a run ccarena wrote earlier) or is empty.
Anything else — a user's directory, the directory holding the scenario,
``.``, ``..``, a file — is refused before anything runs, with the one-line
error (``--out: ...``).

Temporary directories are named ``.<name>.tmp-<pid>-<random>`` (and
``.<name>.old-<pid>-<random>`` while swapping), hold the marker from
their first instant, and are removed on any error or signal that reaches
Python; one left by a process that was killed outright (SIGKILL, power
loss) is removed by the next ccarena that writes next to it, once its pid
is gone.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import signals
from .errors import ScenarioError

#: The file that marks a directory as ccarena's (run or experiment). It
#: lists what ccarena wrote there (sorted relative paths, so that two runs
#: of a scenario give the same bytes); a directory holding anything else
#: is not replaced.
MARKER = ".ccarena-run"
#: Our temporary directories: .<name>.tmp-<pid>-<random> / .<name>.old-...
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<pid>\d+)-[A-Za-z0-9_]+$")


def is_run_dir(path: Path) -> bool:
    """True if ``path`` is a directory that ccarena wrote (it has the marker)."""
    return path.is_dir() and (path / MARKER).is_file()


def _contents(directory: Path) -> list[str]:
    return sorted(
        str(p.relative_to(directory)) for p in directory.rglob("*") if p.name != MARKER or p.parent != directory
    )


def mark(directory: Path) -> None:
    """Mark ``directory`` as ccarena's, listing what is in it now."""
    text = json.dumps({"written_by": "ccarena", "files": _contents(directory)}, indent=1) + "\n"
    (directory / MARKER).write_text(text, encoding="utf-8")


def _foreign(directory: Path) -> list[str]:
    """What a marked ``directory`` holds beyond what ccarena wrote there."""
    try:
        written = set(json.loads((directory / MARKER).read_text(encoding="utf-8"))["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return [MARKER]  # unreadable: treat it all as someone else's
    return [name for name in _contents(directory) if name not in written]


def _problem(out: Path) -> str | None:
    """Why ``out`` cannot become a run directory, or None if it can."""
    text = str(out)
    if text in ("", ".") or out.name in ("", ".", ".."):
        return f"{text or repr(text)} names no new directory (give a directory name, e.g. runs/mine)"
    if out.is_symlink():
        return f"{out} is a symbolic link; give the directory itself"
    if out.exists():
        if not out.is_dir():
            return f"{out} exists and is not a directory"
        if not is_run_dir(out) and any(out.iterdir()):
            return (
                f"{out} exists and is not a ccarena run directory (no {MARKER} in it); "
                "it is left alone: choose another --out or empty it yourself"
            )
        foreign = _foreign(out) if is_run_dir(out) else []
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            return (
                f"{out} holds files ccarena did not write ({shown}); it is left alone: "
                "move them or choose another --out"
            )
    # The nearest existing ancestor must be a directory we can create in.
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


def check_target(out: Path) -> None:
    """Fail early (before simulating, nothing written) if ``out`` cannot
    become a run directory or is a directory ccarena may not replace."""
    problem = _problem(Path(out))
    if problem is not None:
        raise ScenarioError("--out", problem)


def remove_stale_temporaries(parent: Path) -> list[Path]:
    """Remove ccarena's temporary directories in ``parent`` whose process
    is gone (left by a kill that Python never saw); the removed paths."""
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP.match(entry.name)
        if not match or entry.is_symlink() or _alive(int(match["pid"])):
            continue
        if entry.is_dir() and (entry / MARKER).is_file():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.is_file() and match["kind"] == "tmp":
            entry.unlink(missing_ok=True)  # a write_file_atomic() cut short
        else:
            continue
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


def _temporary(out: Path, kind: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.{kind}-{os.getpid()}-", dir=out.parent))
    mark(tmp)
    return tmp


@contextmanager
def atomic_dir(out: Path) -> Iterator[Path]:
    """Yield a fresh, marked temporary directory; on success it replaces
    ``out`` (which must be absent, empty, or a ccarena run directory), on
    any failure or signal it is deleted."""
    out = Path(out)
    check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out.parent)
    try:
        tmp = _temporary(out, "tmp")
        yield tmp
        mark(tmp)  # whatever the caller did inside, the result is marked
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        with signals.held():  # a signal finds either the old run or the new one
            _swap_into_place(tmp, out)
    except BaseException:
        # By name, not by variable: a signal may land between mkdtemp and
        # the assignment.
        for leftover in out.parent.glob(f".{glob.escape(out.name)}.tmp-{os.getpid()}-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        raise


def check_owned_file(path: Path, first_line: str) -> None:
    """Fail early if ``path`` exists and is not a file ccarena wrote (whose
    first line starts with ``first_line``): it would be overwritten."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    try:
        with open(path, encoding="utf-8") as handle:
            head = handle.readline()
    except (OSError, UnicodeDecodeError):
        head = ""
    if not path.is_file() or path.is_symlink() or not head.startswith(first_line):
        raise ScenarioError("--out", f"{path} exists and was not written by ccarena; it is left alone")


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; when the block ends without
    error it replaces ``path`` (whole or not at all), on any error it is
    removed. For files written by a library (Parquet, PNG)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file_atomic(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed into place)."""
    with atomic_file(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _swap_into_place(tmp: Path, out: Path) -> None:
    # Checked again: the target may have changed while we ran.
    check_target(out)
    if out.is_dir() and is_run_dir(out):
        old = _temporary(out, "old")
        os.replace(out, old / out.name)
        try:
            os.replace(tmp, out)
        except BaseException:
            os.replace(old / out.name, out)  # put the earlier run back
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
