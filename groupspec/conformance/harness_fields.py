"""What the harness's mixins (:mod:`.abstraction`, :mod:`.linearization`, :mod:`.gaps`) read of
:class:`~groupspec.conformance.harness.Harness` and of one another: declarations for the type checker only.

At run time :class:`HarnessFields` is an empty class (every name is declared under ``TYPE_CHECKING``): the
harness's ``__init__`` sets the fields, the mixins define the methods. :class:`Tracking`, the per-process
bookkeeping of :mod:`.linearization` (which names it too), lives here with the fields that name it.

May import: ``groupspec.model``, ``groupspec.reference`` and this package's modules (those for annotations only).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from groupspec.model import Client

if TYPE_CHECKING:
    from groupspec.model import Config, State
    from groupspec.reference.classic import GroupView
    from groupspec.reference.sim import SimProc, Simulator

    from .connect import ConnectView
    from .refinement import Variant

__all__ = ["HarnessFields", "Tracking"]


@dataclass
class Tracking:
    """Per-process linearization bookkeeping."""

    frozen: Client | None = None  # alpha shows this client until its request takes effect
    frozen_kind: str = ""  # "join" | "sync" | "static" | "leave"
    # "leave": the process stopped (or reset at max.poll.interval) with requests still travelling. It
    # stays shown as running until its last requests are handled; `conn` and `corrs` (correlation id ->
    # generation of the request) name its JoinGroup/SyncGroup requests from before it stopped, `quiet`
    # those of them answered at once with an error (handled within the model's step: no inbox).
    conn: int = -1
    corrs: dict[int, int] = field(default_factory=dict)
    quiet: set[int] = field(default_factory=set)
    handled: set[int] = field(default_factory=set)  # those of them that reached the coordinator


class HarnessFields:
    """The fields of a harness (set by ``Harness.__init__``) and the helpers the mixins share."""

    if TYPE_CHECKING:
        variant: Variant
        seed: int
        members: int
        max_partitions: int
        depth: int
        names: list[str]
        slot: dict[str, int]
        cfg: Config
        topics: tuple[str, ...]
        topic_base: dict[str, int]
        topic_max: dict[str, int]
        subscriptions: dict[str, tuple[str, ...]]
        sim: Simulator
        connect: ConnectView | None  # connect-delayed: the Connect parts of alpha
        # a classic page (make() answers a Spec; the harness runs the classic pages and reads their own steps,
        # _receive_join, compute_target, ..., which the Spec interface does not name)
        proto: Any
        state: State
        track: dict[str, Tracking]
        suspended: str
        loss_end: int
        unknown_static: list[str]
        orphan_gap: bool | str  # model gap 9 met in this step (a str: why, for the Connect shape)
        _head: Any
        _held_pending: set[int]
        _shown_pending: set[int]
        _pre_pending: set[int]
        _pause_started: dict[str, int]
        _left: set[tuple[str, int, int]]
        _last_ids: tuple[dict[int, str], set[str]]
        _hold_real: tuple[Any, ...] | None

        def _process(self, name: str) -> SimProc | None: ...
        def _group_view(self) -> GroupView | None: ...
        def _mask(self, parts: Iterable[Any]) -> int: ...
        def _subscribed(self, name: str) -> int: ...
        def _assignment_mask(self, blob: bytes) -> int: ...
        def _member_slot(self, mv: Any) -> int | None: ...
        def _freeze_leaver(self, name: str, tr: Tracking, shown: Client, inflight: dict[int, Any], conn: int) -> None: ...
        def _parked(self, sender: tuple[Any, ...]) -> bool: ...
