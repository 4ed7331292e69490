"""Which engine explores a protocol variant, in one place, and the checker's entry point :func:`check`.

The Python :class:`~groupspec.checker.explorer.Explorer` runs the model's own code on every variant;
the compiled engine (:mod:`groupspec.checker.compiled`) runs the same search on a numba encoding of the
family (classic, KIP-848, the migration) wherever the model says one covers the object
(``Spec.compiled_encoding``, model/spec.py) and the kernel's limits allow. This module is the only one that
knows both: the explorer never imports the compiled engine, and the compiled engine imports only the
explorer's result types.
"""
from __future__ import annotations

from typing import Any, Callable

from groupspec.model import TIMING_FAULTS, Spec

from .explorer import Explorer, Result

__all__ = ["ENGINES", "LIMITS", "COMPILE_NOTICE", "PARALLEL_NOTICE", "make_explorer", "check", "validate", "python_only"]

ENGINES = ("auto", "compiled", "python")
# Measured by bench/bench_readme.py with numba's cache in an empty folder: the first search compiles the one
# search for every family (classic, KIP-848, migration: no other family compiles again); the first search with
# --workers 2 or more compiles the parallel expansion and merge once more. Nothing else compiles.
# (50 and 6.6 CPU-seconds, a warm run's 1 s included; on a busy machine the wall clock is longer: 320 s and 30 s
# at load 18 on 2 cores).
COMPILE_NOTICE = "compiling the checker's engine, first run only, ~50 s"
PARALLEL_NOTICE = "compiling the checker's parallel search, first run with --workers only, ~6 s"


def make_explorer(proto: Spec, engine: str = "auto", notice: Callable[[str], None] | None = None, workers: int = 1,
                  **kwargs: Any) -> Explorer:
    """The explorer for ``proto``: see :func:`check` for what ``engine``, ``notice`` and ``workers`` mean."""
    if engine == "python":
        return Explorer(proto, **kwargs)
    from .compiled import CompiledExplorer, needs_compiling, supports  # numba: imported only when a search starts

    # Not compiled (Spec.compiled_encoding): connect-keep-work (Connect workers keeping their work across a
    # reset), the protocol vote's variants (python_only), the group-formation and timer faults (initial-delay,
    # two-step-join, sync-timeout, late-expiry), a variant that overrides a rule its kernel mirrors.
    if supports(proto):
        if notice is not None:
            if needs_compiling(1):
                notice(COMPILE_NOTICE if workers == 1 or not needs_compiling(workers)
                       else COMPILE_NOTICE + " (+ ~6 s: its parallel search)")
            elif workers > 1 and needs_compiling(workers):
                notice(PARALLEL_NOTICE)
        return CompiledExplorer(proto, workers=workers, **kwargs)
    if engine == "compiled":
        refuse_compiled_faults(proto)
        raise ValueError(f"the compiled engine does not cover protocol {proto.name!r}; use --engine python or auto")
    return Explorer(proto, **kwargs)


def python_only(proto: Spec) -> bool:
    """Only the Python explorer runs ``proto``: no compiled encoding covers it (``Spec.compiled_encoding``: a
    variant that says so, ``python_only = True``, the protocol vote's in model/upgrade.py; a fault the compiled
    kernels do not encode, ``model.core.TIMING_FAULTS``; a rule a kernel mirrors overridden)."""
    return proto.compiled_encoding() is None


def refuse_compiled_faults(proto: Spec) -> None:
    """ValueError (one line) if ``proto`` uses a fault the compiled engine does not encode."""
    names = sorted(TIMING_FAULTS & set(proto.cfg.faults))
    if names:
        raise ValueError(f"the compiled engine does not cover the fault{'s' if len(names) > 1 else ''} "
                         f"{','.join(names)} (model/formation.py); use --engine python or auto")


def validate_faults(protocol: str, faults: frozenset[str], engine: str = "auto", **bounds: Any) -> None:
    """ValueError (one line) for faults the variant does not model, or the compiled engine does not cover."""
    from groupspec.model import Config, make

    cfg = Config(faults=frozenset(faults), **{k: v for k, v in bounds.items()
                                            if k in ("members", "partitions", "topics", "budget", "assignor")})
    proto = make(protocol, cfg)
    if engine == "compiled":
        refuse_compiled_faults(proto)


MAX_WORKERS = 64  # expansion threads (the merge is one more)
LIMITS = {"members": (1, 6), "partitions": (1, 12), "topics": (1, 4), "budget": (0, 8)}


def validate(protocol: str, assignor: str = "sticky", members: int = 3, partitions: int = 4, topics: int = 1,
             budget: int = 2, max_states: int | None = None, engine: str = "auto", workers: int = 1,
             forget_dead: bool = False) -> None:
    """Raise ValueError, with one line naming the bad bound, for what :func:`check` cannot run."""
    from groupspec.model import VARIANTS

    if protocol not in VARIANTS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(VARIANTS)}")
    names = VARIANTS[protocol].assignors  # a variant family may have its own (Spec.assignors)
    if assignor not in names:
        raise ValueError(f"unknown assignor {assignor!r} for {protocol}; choose from {', '.join(names)}")
    for name, value in (("members", members), ("partitions", partitions), ("topics", topics), ("budget", budget)):
        lo, hi = LIMITS[name]
        if not lo <= value <= hi:
            raise ValueError(f"--{name} must be between {lo} and {hi} (got {value})")
    if topics > partitions:
        raise ValueError(f"--topics ({topics}) cannot exceed --partitions ({partitions})")
    if max_states is not None and max_states < 1:
        raise ValueError(f"--max-states must be positive (got {max_states})")
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be between 1 and {MAX_WORKERS} (got {workers})")
    if workers > 1 and engine == "python":
        raise ValueError("--workers applies to the compiled engine only; drop it or use --engine auto/compiled")
    if forget_dead:
        from groupspec.model import Config, make
        from groupspec.model import forget_dead_fields

        forget_dead_fields(make(protocol, Config(members=1, partitions=1, assignor=assignor)))  # ValueError: n/a


def check(
    protocol: str,
    assignor: str = "sticky",
    members: int = 3,
    partitions: int = 4,
    topics: int = 1,
    faults: frozenset[str] = frozenset(),
    budget: int = 2,
    max_states: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    with_symmetry_factor: bool = True,
    engine: str = "auto",
    notice: Callable[[str], None] | None = None,
    workers: int = 1,
    forget_dead: bool = False,
) -> tuple[Any, Result]:
    """Explore one protocol variant on one finite instance. Raises ValueError on bad bounds.

    ``engine``: ``"python"`` runs this module's :class:`Explorer` on the model's own code;
    ``"compiled"`` runs ``groupspec.checker.compiled`` (the same search on a compiled encoding of the family,
    checked against the model by the drift tests); ``"auto"`` takes the compiled engine wherever the model
    says an encoding covers the object (``Spec.compiled_encoding``: the classic variants, the consumer family,
    the migration) and the Python one elsewhere (``zookeeper``, the protocol vote, the timing faults).
    ``notice(text)`` is called once before a search that must first compile the compiled engine (the first
    run on a machine), with :data:`COMPILE_NOTICE`; ``progress(states, queued)`` from the first state on.
    ``workers``: threads expanding states in parallel in the compiled engine (the same states, edges,
    verdicts and counterexamples as one; see ``groupspec.checker.compiled.parallel``); the Python engine
    always runs on one. ``forget_dead``: keys forget the fields no future step or property reads
    (``groupspec.model.symmetry.forget_dead_fields``: fewer states, the same verdicts; ValueError where it
    does not apply).
    """
    from groupspec.model import Config, make

    validate(protocol, assignor, members, partitions, topics, budget, max_states, engine, workers)
    cfg = Config(members=members, partitions=partitions, topics=topics, faults=frozenset(faults), budget=budget, assignor=assignor)
    proto = make(protocol, cfg)
    if forget_dead:
        from groupspec.model import forget_dead_fields

        forget_dead_fields(proto)
    ex = make_explorer(proto, engine, notice=notice, workers=workers, max_states=max_states, progress=progress)
    res = ex.run()
    res.engine = ex.engine
    res.workers = ex.workers
    if with_symmetry_factor:
        res.symmetry_factor, res.symmetry_exact = ex.symmetry_factor()
    return proto, res
