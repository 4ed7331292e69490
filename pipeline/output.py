"""Output directories that are never half-written.

:func:`prepare_out` validates ``--out`` before any work (refused if it exists, unless ``overwrite``;
its parent must exist and be writable). :class:`Staging` is where a job writes: a hidden sibling
directory ``.<name>.tmp-<pid>`` that becomes ``--out`` with one rename when the job succeeds
(:meth:`Staging.commit`) and is removed when it fails or is interrupted, so no partial dataset ever
sits under the final name. With ``overwrite`` the old directory is moved aside first and deleted
only after the new one is in place.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

__all__ = ["OutputError", "prepare_out", "Staging"]


class OutputError(ValueError):
    """``--out`` cannot be used."""


def prepare_out(out: str, overwrite: bool) -> Path:
    p = Path(out)
    if p.exists() and not overwrite:
        raise OutputError(f"--out: {out} already exists; pass --overwrite to replace it")
    if p.exists() and not p.is_dir():
        raise OutputError(f"--out: {out} exists and is not a directory")
    parent = p.absolute().parent
    if not parent.is_dir():
        raise OutputError(f"--out: parent directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"--out: parent directory {parent} is not writable")
    # os.access says yes to root everywhere (/proc, /sys, a read-only mount): try what the job will do
    try:
        probe = tempfile.mkdtemp(prefix=f".{p.name}.probe-", dir=parent)
    except OSError as e:
        raise OutputError(f"--out: cannot create a directory in {parent} ({e.strerror or e})") from None
    os.rmdir(probe)
    return p


class Staging:
    """``with Staging(out) as tmp: ...write under tmp...; stage.commit()``."""

    def __init__(self, out: Path, overwrite: bool = False) -> None:
        self.out = out
        self.overwrite = overwrite
        self.path = out.absolute().parent / f".{out.name}.tmp-{os.getpid()}"
        self.committed = False

    def __enter__(self) -> Path:
        try:
            if self.path.exists():
                shutil.rmtree(self.path)
            self.path.mkdir()
        except OSError as e:
            raise OutputError(f"--out: cannot create {self.path} ({e.strerror or e})") from None
        return self.path

    def commit(self) -> None:
        old = None
        if self.out.exists():
            if not self.overwrite:
                raise OutputError(f"--out: {self.out} appeared while the job ran; not replacing it")
            old = self.out.absolute().parent / f".{self.out.name}.old-{os.getpid()}"
            os.replace(self.out, old)
        os.replace(self.path, self.out)
        self.committed = True
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if not self.committed:
            shutil.rmtree(self.path, ignore_errors=True)
