"""Applying one mutant in this process, on a copy: an import hook serves the mutated module.

The checkout is never written. :func:`applied` drops every loaded module that reads the model (the
model itself, the checker, the trace checker, the conformance harness, the proofs) from
``sys.modules``, puts a finder first on ``sys.meta_path`` that compiles the mutated module from the
source with the one change, and on the way out drops them again and puts back the very module objects
that were loaded before (and the parent packages' attributes that name them): code that imported the model
before the block (a test module's ``make``, its action classes) and code that imports it after see the same
classes, so states and actions still compare equal. The reference implementation (``groupspec.reference``) never imports the model and stays loaded.

May import: ``.operators``.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Iterator, Sequence

from .operators import SpecMutant, mutated_code

# Packages whose modules import the model (directly or through another of these): reloaded per mutant.
READERS = ("groupspec.model", "groupspec.checker", "groupspec.trace", "groupspec.conformance", "groupspec.proofs",
           "groupspec.verify")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, m: SpecMutant) -> None:
        self.m = m
        self.code = mutated_code(m)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:  # importlib's signature
        if fullname != self.m.fullname:
            return None
        origin = importlib.machinery.PathFinder.find_spec(fullname, path)
        spec = importlib.util.spec_from_loader(fullname, self, origin=origin.origin if origin else None)
        if spec is not None and origin is not None:
            spec.has_location = True
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__file__ = getattr(module.__spec__, "origin", None)
        exec(self.code, module.__dict__)


def _readers() -> dict[str, object]:
    return {name: mod for name, mod in sys.modules.items()
            if any(name == p or name.startswith(p + ".") for p in READERS)}


def _purge() -> None:
    for name in _readers():
        del sys.modules[name]


def _restore(saved: dict[str, object]) -> None:
    _purge()
    sys.modules.update(saved)  # type: ignore[arg-type]
    for name, mod in saved.items():
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, mod)


@contextlib.contextmanager
def applied(m: SpecMutant | None) -> Iterator[None]:
    """Within the block, ``import groupspec.model...`` (and everything that reads it) sees ``m``."""
    finder = _Finder(m) if m is not None else None
    saved = _readers()
    _purge()
    if finder is not None:
        sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder is not None:
            sys.meta_path.remove(finder)
        _restore(saved)
