"""What a protocol variant is, as a type: the one view of the model that the checker, ``groupspec verify`` and
the drift tests read.

Every variant (``make(name, config)``) is a :class:`Spec`: initial states, the steps from a state (every
enabled action with the state it leads to, in a fixed order), the symmetry-reduced key, whether a state is
converged, the properties that apply, the faults that apply, and which other encodings of the same rules
exist (:data:`COMPILED_CLASSIC`, :data:`COMPILED_CONSUMER`, :data:`COMPILED_MIGRATION`: the checker's numba
kernels; :data:`Z3`: ``groupspec.proofs``). The tools ask the object, never its name or its class: a new
family (share groups, streams groups) declares these once, on its page, and the checker, the verifier and
the proofs follow.

:class:`SpecBase` is the small base class every page derives from: the defaults (no variant-specific safety
property, generations checked, no compiled encoding) and the one rule that decides whether a compiled
encoding covers an object (:meth:`SpecBase.compiled_encoding`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar, Hashable, Iterator, Optional, Protocol, runtime_checkable

from .core import CONSUMER_FLIGHT_FAULTS, FAULTS, TIMING_FAULTS, Config

COMPILED_CLASSIC = "compiled-classic"  # groupspec/checker/compiled/kernel.py
COMPILED_CONSUMER = "compiled-consumer"  # groupspec/checker/compiled/consumer_kernel.py
COMPILED_MIGRATION = "compiled-migration"  # groupspec/checker/compiled/migration_kernel.py
Z3 = "z3"  # groupspec/proofs (its PROTOCOLS; tests/test_spec.py keeps the two lists equal)
ENCODINGS = (COMPILED_CLASSIC, COMPILED_CONSUMER, COMPILED_MIGRATION, Z3)

# join, leave, crash, ... partitions: not the classic formation/timer faults, nor KIP-848's requests and answers in
# flight (model/consumer_flight.py: verify runs those in rows of their own)
BASE_FAULTS = frozenset(f for f in FAULTS if f not in TIMING_FAULTS | CONSUMER_FLIGHT_FAULTS)
ASSIGNOR_NAMES = ("sticky", "roundrobin", "range")  # the classic client-side assignors (model/assignors.py)
# watches fired by the step s -> t (model/zookeeper.py's ZooKeeper.notifications): None, or (group size, watches)
Notifications = Callable[[Any, Any], Optional[tuple[int, int]]]


@runtime_checkable
class Spec(Protocol):
    """A protocol variant on one finite instance (``cfg``), as the tools read it."""

    # read-only here: a page declares them as class variables (name, broken, ...) or sets them in __init__
    @property
    def name(self) -> str: ...

    @property
    def cfg(self) -> Config: ...

    @property
    def symmetric(self) -> bool: ...

    @property
    def broken(self) -> bool: ...

    @property
    def expect_violation(self) -> str: ...

    @property
    def in_flight(self) -> bool:
        """KIP-848's requests and answers in flight are modelled (model/consumer_flight.py: one of its faults is on)."""
        ...

    @property
    def assignor_name(self) -> str:
        """The assignor this object runs with (one of its class's ``assignors``; the checker's Result names it)."""
        ...

    @property
    def notifications(self) -> Notifications | None:
        """ZooKeeper's watches fired per step (the explorer counts them); None for every other variant."""
        ...

    def member_name(self, i: int) -> str: ...

    def init_states(self) -> list[Any]: ...

    def successors(self, s: Any) -> Iterator[tuple[Any, Any]]: ...

    def step(self, s: Any, a: Any) -> Any: ...

    def key(self, s: Any) -> Hashable: ...

    def exact_key(self, s: Any) -> Hashable:
        """Generations up to a shift, and nothing else (the explorer's graph export: names are kept)."""
        ...

    def partition_name(self, p: int) -> str: ...

    def converged(self, s: Any) -> bool: ...

    def orbit_size(self, s: Any) -> int: ...

    def safety_properties(self) -> tuple[Any, ...]: ...

    def action_properties(self) -> tuple[Any, ...]: ...

    def sometimes_properties(self) -> tuple[Any, ...]: ...

    @classmethod
    def applicable_faults(cls) -> frozenset[str]: ...

    def compiled_encoding(self) -> str | None: ...

    def encodings(self) -> frozenset[str]: ...


class SpecBase:
    """The defaults of :class:`Spec`; a page overrides what differs."""

    name: ClassVar[str] = "spec"
    summary: ClassVar[str] = ""  # one line for `groupspec check --list` (every page writes its own)
    broken: ClassVar[bool] = False
    expect_violation: ClassVar[str] = ""
    has_generations: ClassVar[bool] = True  # a step's generation (epoch) checks apply (ACTIONS)
    extra_safety: ClassVar[tuple[Any, ...]] = ()  # the variant's own ALWAYS properties (zookeeper)
    notifications: Notifications | None = None  # zookeeper: watches fired per directory change (the explorer counts them)
    python_only: ClassVar[bool] = False  # no compiled encoding covers it, whatever it inherits
    encoding: ClassVar[str | None] = None  # the compiled kernel that mirrors this class's rules
    # The model functions that kernel mirrors: a subclass that overrides any of them is another machine and
    # runs on the Python explorer (the kernel only follows the flags it reads).
    encoded: ClassVar[tuple[str, ...]] = ()
    z3: ClassVar[bool] = False  # groupspec.proofs encodes this variant
    assignors: ClassVar[tuple[str, ...]] = ASSIGNOR_NAMES  # the assignors it runs with (the first is its default)
    cfg: Config
    assignor_name: str  # each page's __init__ sets it (one of ``assignors``)
    canon: Any = None
    in_flight: bool = False  # model/consumer_flight.py sets it on a KIP-848 page (one of its faults is on)

    if TYPE_CHECKING:  # what every page defines itself (so that a page class, made with its Config, is a Spec)
        symmetric: bool

        def __init__(self, cfg: Config) -> None: ...
        def init_states(self) -> list[Any]: ...
        def successors(self, s: Any) -> Iterator[tuple[Any, Any]]: ...
        def step(self, s: Any, a: Any) -> Any: ...
        def key(self, s: Any) -> Hashable: ...
        def exact_key(self, s: Any) -> Hashable: ...
        def partition_name(self, p: int) -> str: ...
        def member_name(self, i: int) -> str: ...
        def converged(self, s: Any) -> bool: ...

    # -- properties -------------------------------------------------------------------------------------
    def safety_properties(self) -> tuple[Any, ...]:
        """The ALWAYS properties checked on every state: every variant's, then its own."""
        from .properties import SAFETY

        return SAFETY + tuple(self.extra_safety)

    def action_properties(self) -> tuple[Any, ...]:
        """The ACTION properties checked on every step (none where there are no generations)."""
        from .properties import ACTIONS

        return ACTIONS if self.has_generations else ()

    def sometimes_properties(self) -> tuple[Any, ...]:
        from .properties import SOMETIMES

        return SOMETIMES

    def orbit_size(self, s: Any) -> int:
        """Concrete states ``s``'s key stands for: one, without symmetry reduction (a symmetric family overrides)."""
        return 1

    # -- faults and encodings -----------------------------------------------------------------------------
    @classmethod
    def applicable_faults(cls) -> frozenset[str]:
        """The faults this variant models (``groupspec verify`` runs each correct variant with all of them)."""
        return BASE_FAULTS

    def compiled_encoding(self) -> str | None:
        """The compiled kernel that covers this object (one of :data:`ENCODINGS`), or None: the variant says
        so (``python_only``), a fault the kernels do not encode is on (``TIMING_FAULTS``), or the class
        overrides a function the kernel mirrors (``encoded``, compared with the class that declared it)."""
        if self.encoding is None or self.python_only or TIMING_FAULTS & set(self.cfg.faults):
            return None
        root = next(c for c in type(self).__mro__ if "encoding" in vars(c))
        if any(getattr(type(self), f) is not getattr(root, f) for f in self.encoded):
            return None
        return self.encoding

    def encodings(self) -> frozenset[str]:
        """Every other encoding of this object's rules: its compiled kernel, Z3."""
        compiled = self.compiled_encoding()
        return frozenset(({compiled} if compiled else set()) | ({Z3} if self.z3 else set()))
