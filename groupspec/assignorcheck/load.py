"""Loading candidate assignors and calling them safely (contract assignor-check.md, "Candidate forms").

Theory of operation
-------------------
:func:`load_candidate` turns whatever the user hands us into a :class:`Candidate`: one uniform function
``call(partitions_per_topic, subscriptions) -> raw result`` plus a decoder, the declared protocol
(``eager``/``cooperative``) and a *kind* (``range``/``roundrobin``/``sticky`` or ``None``) read from the
candidate's name, which decides whether I5/I7/I9 apply.

Accepted forms:

1. a plain callable ``assign(partitions_per_topic, subscriptions)``, or an object with such an ``assign``
   method and optional ``protocol`` and ``name`` attributes;
2. a kafka-python or aiokafka ``AbstractPartitionAssignor`` subclass or instance. We drive it the way
   kafka-python's ``ConsumerCoordinator`` does: every member gets its own assignor instance, which is told its
   previous assignment through ``on_assignment(assignment, generation)`` and then produces its JoinGroup
   metadata with ``metadata(topics)``; that metadata is encoded and decoded as on the wire, handed to the
   leader's ``assign(cluster, members)`` together with a ``ClusterMetadata``-like object, and the leader's
   ``ConsumerProtocolAssignment`` per member is encoded and decoded too. The protocol is read from
   ``supported_protocols()`` (KIP-429 ``RebalanceProtocol``). aiokafka's convention (members as a dict of
   ``ConsumerProtocolMemberMetadata``, no generation, eager only) has its own adapter;
3. the project's own assignors by name (``groupspec.reference.assignors.get``).

:class:`CallRunner` runs each call on a worker thread and waits at most ``call_timeout`` seconds. A call that
overruns is abandoned: an asynchronous ``TimeoutError`` is raised in the worker thread (which stops pure-Python
loops) and a fresh worker takes over, so a hanging candidate never hangs the checker. Inputs are deep-copied
for every call, so a candidate that mutates its arguments cannot corrupt the checker's state.
"""
from __future__ import annotations

import copy
import ctypes
import functools
import importlib
import inspect
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .core import INTERNAL_TOPICS, Malformed, decode_output
from .racks import call_args

BUILTIN_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")


class LoadError(Exception):
    """The target cannot be turned into a candidate (one line, for the CLI's exit status 2)."""


@dataclass
class Candidate:
    """A loaded assignor: ``call`` returns the raw result; ``decode`` turns it into an assignment."""

    name: str
    protocol: str
    kind: str | None
    call: Callable[[dict[str, int], dict[str, dict[str, Any]]], Any]
    decode: Callable[[Any], dict[str, list[tuple[str, int]]]] = decode_output
    target: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: makes a new, independent instance and returns its call function (I10i: instances must not share
    #: state); ``None`` for a plain function, which has no instances
    instances: Callable[[], Callable[[dict[str, int], dict[str, dict[str, Any]]], Any]] | None = None
    #: declares rack-awareness (KIP-881): the checker then draws replica racks and passes them as
    #: ``partition_racks=`` (see :mod:`groupspec.assignorcheck.racks`)
    rack_aware: bool = False
    #: the protocol was declared (an attribute, ``--protocol``, the library's own declaration), not defaulted
    protocol_declared: bool = True


def kind_from_name(name: str | None) -> str | None:
    """``range``/``roundrobin``/``sticky`` when the candidate's name declares one of Kafka's algorithms."""
    if not name:
        return None
    n = name.lower().replace("_", "-").replace(" ", "-")
    if "sticky" in n:
        return "sticky"
    if "roundrobin" in n or "round-robin" in n:
        return "roundrobin"
    if "range" in n:
        return "range"
    return None


# ------------------------------------------------------------------------------------ kafka-python


def _is_kafka_assignor(obj: Any) -> bool:
    cls = obj if inspect.isclass(obj) else type(obj)
    return any(base.__name__ == "AbstractPartitionAssignor" and base.__module__.split(".")[0] in ("kafka", "aiokafka")
               for base in cls.__mro__)


class FakeCluster:
    """The part of kafka-python's ``ClusterMetadata`` that assignors read (``topics``, ``partitions_for_topic``).

    Internal topics (``__consumer_offsets``, ``__transaction_state``) are flagged as the broker flags them, so
    ``topics()`` leaves them out by default, exactly like ``ClusterMetadata.topics(exclude_internal_topics=True)``.
    """

    def __init__(self, partitions_per_topic: dict[str, int]):
        self._parts = {t: set(range(max(0, int(n)))) for t, n in partitions_per_topic.items()}
        self.internal_topics = {t for t in self._parts if t in INTERNAL_TOPICS}
        self.unauthorized_topics: set[str] = set()

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        ts = set(self._parts)
        return ts - self.internal_topics if exclude_internal_topics else ts

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        p = self._parts.get(topic)
        return None if p is None else set(p)

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        return self.partitions_for_topic(topic)


class _Member:
    """A JoinGroup response member as kafka-python's coordinator hands it to ``assign``."""

    def __init__(self, member_id: str, group_instance_id: str | None, metadata: Any):
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"Member({self.member_id!r}, {self.group_instance_id!r}, {self.metadata!r})"


def _is_aiokafka(obj: Any) -> bool:
    cls = obj if inspect.isclass(obj) else type(obj)
    return any(b.__module__.split(".")[0] == "aiokafka" for b in cls.__mro__)


def _legacy_root(obj: Any) -> str:
    """``aiokafka`` or ``kafka``: the package whose 2.0-style ``coordinator.protocol`` the assignor speaks."""
    return "aiokafka" if _is_aiokafka(obj) else "kafka"


def _kafka_layout() -> str:
    """``3`` for kafka-python 3.x's protocol modules, ``2.0`` for the 2.0.x layout (also kafka-python-ng)."""
    import importlib.util

    def has(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    if has("kafka.protocol.consumer.metadata"):
        return "3"
    if has("kafka.coordinator.protocol"):
        return "2.0"
    version = getattr(sys.modules.get("kafka"), "__version__", "unknown")
    raise LoadError(f"kafka-python {version} is not supported: it has neither kafka.protocol.consumer.metadata "
                    f"(kafka-python 3.x) nor kafka.coordinator.protocol (kafka-python 2.0.x, kafka-python-ng)")


_DATA = (type(None), bool, int, float, str, bytes, list, dict, set, tuple, frozenset)


class _ClassState:
    """The data attributes of an assignor's classes, as first seen; :meth:`reset` puts them back.

    Driving members "alone" models one consumer per process: each process starts with the classes as the
    library defines them. Without the reset, a class attribute set for one member would leak into the next
    one even in that mode."""

    def __init__(self, obj: Any):
        cls = obj if inspect.isclass(obj) else type(obj)
        self.saved = [(c, {k: copy.deepcopy(v) for k, v in vars(c).items()
                           if not k.startswith("__") and isinstance(v, _DATA)})
                      for c in cls.__mro__ if c is not object]

    def reset(self) -> None:
        for c, attrs in self.saved:
            for k, v in attrs.items():
                try:
                    setattr(c, k, copy.deepcopy(v))
                except (AttributeError, TypeError):
                    pass


def _new_instance(obj: Any) -> Any:
    """A member's own assignor: a new object of a class, or a deep copy of an instance."""
    return obj() if inspect.isclass(obj) else copy.deepcopy(obj)


def _owned_by_topic(sub: dict[str, Any]) -> dict[str, list[int]]:
    """A member's owned partitions (``sub["owned"]``: ``(topic, partition)`` pairs) grouped by topic."""
    owned: dict[str, list[int]] = {}
    for t, p in sub.get("owned") or ():
        owned.setdefault(t, []).append(int(p))
    return owned


def legacy_adapter(obj: Any, interleaved: bool = False) -> Callable[[dict[str, int], dict[str, dict[str, Any]]], Any]:
    """A form-1 function that drives a kafka-python 2.0.x / kafka-python-ng / aiokafka assignor the way their
    coordinators do.

    Their calling convention: ``assign(cluster, {member_id: ConsumerProtocolMemberMetadata})`` (version,
    subscription, user_data; no group instance ids) and ``on_assignment(assignment)`` without a generation.
    kafka-python 2.0.x's coordinator then calls ``on_generation_assignment(generation)`` on an assignor named
    ``sticky``; aiokafka's coordinator never does (aiokafka 0.14 defines the method and never calls it).

    Each member has its own assignor instance. ``interleaved=False``: each member's metadata is produced right
    after that member's ``on_assignment``. ``interleaved=True``: as in a process hosting all the consumers,
    every member first receives its assignment (SyncGroup), and only then does every member produce its
    JoinGroup metadata; an assignor keeping its state in class attributes then shows it (I10i).
    """
    root = _legacy_root(obj)
    proto = importlib.import_module(f"{root}.coordinator.protocol").ConsumerProtocol
    pristine = _ClassState(obj)

    def fresh() -> Any:
        return _new_instance(obj)

    def told(inst: Any, sub: dict[str, Any]) -> Any:
        owned = _owned_by_topic(sub)
        if not owned and sub.get("generation", -1) < 0:
            return inst  # a new member: no assignment received yet
        prev = proto.ASSIGNMENT(0, sorted((t, sorted(ps)) for t, ps in owned.items()), b"")
        inst.on_assignment(proto.ASSIGNMENT.decode(prev.encode()))
        if root == "kafka" and getattr(inst, "name", None) == "sticky" and hasattr(inst, "on_generation_assignment"):
            inst.on_generation_assignment(int(sub.get("generation", -1)))
        return inst

    def meta_of(inst: Any, sub: dict[str, Any]) -> Any:
        meta = inst.metadata(set(sub.get("topics") or ()))
        raw = meta if isinstance(meta, bytes) else meta.encode()
        return proto.METADATA.decode(raw)

    def call(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> Any:
        members: dict[str, Any] = {}
        pristine.reset()
        if interleaved:
            insts = {mid: told(fresh(), sub) for mid, sub in subs.items()}
            for mid, sub in subs.items():
                members[mid] = meta_of(insts[mid], sub)
        else:
            for mid, sub in subs.items():
                pristine.reset()
                members[mid] = meta_of(told(fresh(), sub), sub)
        try:
            return _KafkaResult(fresh().assign(FakeCluster(ppt), members), legacy=root)
        finally:
            pristine.reset()

    return call


aiokafka_adapter = legacy_adapter  # the name earlier releases used


def _kafka_protocol(obj: Any) -> str:
    try:
        inst: Any = obj() if inspect.isclass(obj) else obj
        protos = list(inst.supported_protocols())
    except Exception:
        return "eager"
    if not protos:
        return "eager"
    first = protos[0]
    val = getattr(first, "value", first)
    return "cooperative" if val == 1 or str(getattr(first, "name", "")).upper() == "COOPERATIVE" else "eager"


def kafka_adapter(obj: Any, interleaved: bool = False) -> Callable[[dict[str, int], dict[str, dict[str, Any]]], Any]:
    """A form-1 function that drives a kafka-python 3.x assignor (class or instance) like its coordinator does.

    ``interleaved``: every member's ``on_assignment`` first, then every member's ``metadata`` (as in one
    process hosting all the consumers; see :func:`legacy_adapter`)."""
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

    pristine = _ClassState(obj)

    def fresh() -> Any:
        return _new_instance(obj)

    def told(inst: Any, sub: dict[str, Any]) -> Any:
        owned = _owned_by_topic(sub)
        if owned or sub.get("generation", -1) >= 0:
            prev = ConsumerProtocolAssignment(0, sorted((t, sorted(ps)) for t, ps in owned.items()), b"")
            inst.on_assignment(prev, int(sub.get("generation", -1)))
        return inst

    def member(inst: Any, mid: str, sub: dict[str, Any]) -> _Member:
        meta = inst.metadata(set(sub.get("topics") or ()))
        wire = ConsumerProtocolSubscription.decode(meta.encode(version=meta.version))
        return _Member(mid, sub.get("instance_id"), wire)

    def alone(mid: str, sub: dict[str, Any]) -> _Member:
        pristine.reset()
        return member(told(fresh(), sub), mid, sub)

    def call(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> Any:
        pristine.reset()
        if interleaved:
            insts = {mid: told(fresh(), sub) for mid, sub in subs.items()}
            members = [member(insts[mid], mid, sub) for mid, sub in subs.items()]
        else:
            members = [alone(mid, sub) for mid, sub in subs.items()]
        try:
            return _KafkaResult(fresh().assign(FakeCluster(ppt), members))
        finally:
            pristine.reset()

    return call


class _KafkaResult:
    """Marks a kafka-python result so :func:`decode_kafka` knows to decode ``ConsumerProtocolAssignment``s."""

    def __init__(self, raw: Any, legacy: str | None = None):
        self.raw = raw
        self.legacy = legacy  #: "kafka" / "aiokafka" for the 2.0-style protocol classes, None for kafka-python 3.x


def decode_kafka(res: Any) -> dict[str, list[tuple[str, int]]]:
    raw = res.raw if isinstance(res, _KafkaResult) else res
    if isinstance(res, _KafkaResult) and res.legacy:
        return decode_legacy(raw, res.legacy)
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    if not isinstance(raw, dict):
        raise Malformed(f"assign() returned a {type(raw).__name__}, not a dict of ConsumerProtocolAssignment")
    out: dict[str, list[tuple[str, int]]] = {}
    for mid, a in raw.items():
        if not isinstance(mid, str):
            raise Malformed(f"member key {mid!r} is not a str")
        try:
            wire = ConsumerProtocolAssignment.decode(a.encode(version=a.version or 0))
        except Exception as e:  # noqa: BLE001 - any failure to encode is a malformed result
            raise Malformed(f"assignment of {mid!r} cannot be encoded: {type(e).__name__}: {e}") from None
        out[mid] = [(tp.topic, int(p)) for tp in wire.assigned_partitions for p in tp.partitions]
    return out


def decode_legacy(raw: Any, root: str) -> dict[str, list[tuple[str, int]]]:
    ConsumerProtocol = importlib.import_module(f"{root}.coordinator.protocol").ConsumerProtocol

    if not isinstance(raw, dict):
        raise Malformed(f"assign() returned a {type(raw).__name__}, not a dict of ConsumerProtocolMemberAssignment")
    out: dict[str, list[tuple[str, int]]] = {}
    for mid, a in raw.items():
        if not isinstance(mid, str):
            raise Malformed(f"member key {mid!r} is not a str")
        try:
            wire = ConsumerProtocol.ASSIGNMENT.decode(a if isinstance(a, bytes) else a.encode())
        except Exception as e:  # noqa: BLE001 - any failure to encode is a malformed result
            raise Malformed(f"assignment of {mid!r} cannot be encoded: {type(e).__name__}: {e}") from None
        out[mid] = [(t, int(p)) for t, ps in wire.assignment for p in ps]
    return out


# ------------------------------------------------------------------------------------------ loading


def _builtin(name: str) -> Candidate:
    try:
        from groupspec.reference.assignors import get
    except ImportError as e:
        raise LoadError(f"built-in assignor {name!r} is not available ({e})") from None
    a = get(name)
    return Candidate(name=getattr(a, "name", name), protocol=getattr(a, "protocol", "eager"),
                     kind=kind_from_name(name), call=a.assign, target=name, instances=lambda: get(name).assign,
                     rack_aware=_declares_racks(a))


def _declares_racks(obj: Any) -> bool:
    """An assignor declares rack-awareness with a true ``rack_aware`` attribute."""
    return getattr(obj, "rack_aware", False) is True


def _instantiate(cls: type, target: str) -> Any:
    """``cls()`` for a class usable without arguments; LoadError naming what is missing otherwise."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        missing = [n for n, prm in sig.parameters.items()
                   if prm.default is inspect.Parameter.empty
                   and prm.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    inspect.Parameter.KEYWORD_ONLY)]
        if missing:
            raise LoadError(f"{target or cls.__name__}: the class needs constructor arguments "
                            f"({', '.join(missing)}); point TARGET at an instance or a no-argument factory, "
                            f"or use an adapter (see docs/assignor-checker.md)")
    try:
        return cls()
    except Exception as e:  # noqa: BLE001 - any failure to construct is a load error
        raise LoadError(f"{target or cls.__name__}: constructing {cls.__name__}() raised "
                        f"{type(e).__name__}: {e}") from None


def candidate_from_object(obj: Any, target: str = "", protocol: str | None = None,
                          kind: str | None = None) -> Candidate:
    """Turn a Python object (any accepted form) into a :class:`Candidate`; raise LoadError if it is none."""
    if isinstance(obj, Candidate):
        return obj
    if isinstance(obj, str):
        return load_candidate(obj, protocol=protocol, kind=kind)
    if _is_kafka_assignor(obj):
        named = getattr(obj, "name", None)
        name = named if isinstance(named, str) else (obj.__name__ if inspect.isclass(obj) else type(obj).__name__)
        if inspect.isclass(obj):
            _instantiate(obj, target)  # a class the coordinator could not build is a load error, not I11
        legacy = _is_aiokafka(obj) or _kafka_layout() == "2.0"
        adapter = legacy_adapter if legacy else kafka_adapter
        proto = protocol or ("eager" if legacy else _kafka_protocol(obj))
        return Candidate(name=name, protocol=proto, kind=kind or kind_from_name(name),
                         call=adapter(obj), decode=decode_kafka, target=target or name,
                         instances=lambda: adapter(obj, interleaved=True))
    assign = getattr(obj, "assign", None)
    if inspect.isclass(obj) and assign is not None and callable(assign):
        inst = _instantiate(obj, target)
        cand = candidate_from_object(inst, target=target or obj.__name__, protocol=protocol, kind=kind)
        cand.instances = lambda: _instantiate(obj, target).assign
        return cand
    if assign is not None and callable(assign) and not inspect.isclass(obj):
        name = getattr(obj, "name", None) or type(obj).__name__
        _refuse_coroutine_function(assign, target or str(name), "assign")
        proto = protocol or getattr(obj, "protocol", None) or "eager"
        if proto not in ("eager", "cooperative"):
            raise LoadError(f"{target or name}: protocol attribute is {proto!r}, expected 'eager' or 'cooperative'")

        def copies() -> Callable[[dict[str, int], dict[str, dict[str, Any]]], Any]:
            fresh: Callable[[dict[str, int], dict[str, dict[str, Any]]], Any] = copy.deepcopy(obj).assign
            return fresh

        return Candidate(name=str(name), protocol=proto, kind=kind or kind_from_name(getattr(obj, "name", None)),
                         call=assign, target=target or str(name), instances=copies, rack_aware=_declares_racks(obj),
                         protocol_declared=bool(protocol or getattr(obj, "protocol", None)))
    if inspect.isclass(obj):
        raise LoadError(f"{target or obj.__name__}: a class that is neither a kafka-python assignor nor has an "
                        f"assign method")
    if callable(obj):
        named = getattr(obj, "name", None)
        name = named if isinstance(named, str) else getattr(obj, "__name__", type(obj).__name__)
        proto = protocol or getattr(obj, "protocol", None) or "eager"
        if proto not in ("eager", "cooperative"):
            raise LoadError(f"{target or name}: protocol attribute is {proto!r}, expected 'eager' or 'cooperative'")
        _refuse_coroutine_function(obj, target or name, target.rsplit(":", 1)[-1] if target else name)
        _refuse_wrong_signature(obj, target or name)
        return Candidate(name=name, protocol=proto,
                         kind=kind or kind_from_name(getattr(obj, "name", None) if isinstance(getattr(obj, "name", None), str) else None),
                         call=obj, target=target or name, rack_aware=_declares_racks(obj),
                         protocol_declared=bool(protocol or getattr(obj, "protocol", None)))
    raise LoadError(f"{target or obj!r} is a {type(obj).__name__}, not an assignor (expected a callable, an object "
                    f"with assign(), or a kafka-python AbstractPartitionAssignor)")


#: what a candidate whose assign is ``async def`` is told (at load time; a coroutine returned at call time: I11)
COROUTINE_HINT = ("every candidate form is called synchronously and must return the assignment: make it a plain "
                  "def (for example one that returns asyncio.run(...) of the coroutine)")


def _refuse_coroutine_function(fn: Any, target: str, what: str) -> None:
    """An ``async def`` assign returns a coroutine, never an assignment: refused before any example runs (its call
    would only create coroutines nobody awaits), in one line."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
        raise LoadError(f"{target}: not an assignor: {what} is a coroutine function (async def); {COROUTINE_HINT}")


def _refuse_wrong_signature(fn: Any, target: str) -> None:
    """A plain callable is called as ``fn(partitions_per_topic, subscriptions)``: one that cannot take two
    positional arguments (``json:loads``, a helper named by mistake) is refused before any example runs."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: the examples will tell
        return
    try:
        sig.bind(object(), object())
    except TypeError as e:
        raise LoadError(f"{target}: not an assignor: it cannot be called as {target.rsplit(':', 1)[-1]}"
                        f"(partitions_per_topic, subscriptions) ({e})") from None


#: how long importing a candidate's module may take (the CLI gives ``max(IMPORT_TIMEOUT, --call-timeout)``)
IMPORT_TIMEOUT = 20.0


def _import_within(modname: str, timeout: float | None) -> Any:
    """``importlib.import_module(modname)`` on a worker thread, waited for at most ``timeout`` seconds.

    A module that hangs at import (a loop, a blocking connect at module level) would otherwise hang the checker
    for ever; past the limit the import is abandoned (an asynchronous ``TimeoutError`` is raised in the thread,
    which stops pure-Python loops; the daemon thread cannot keep the process alive) and :class:`TimeoutError`
    is raised here. Exceptions of the import itself are re-raised as they are.
    """
    if timeout is None:
        return importlib.import_module(modname)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["module"] = importlib.import_module(modname)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=run, name=f"import {modname}", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        _async_raise(t, TimeoutError)
        raise TimeoutError(timeout)
    if "error" in box:
        raise box["error"]
    return box["module"]


def load_candidate(target: str, protocol: str | None = None, kind: str | None = None,
                   import_timeout: float | None = IMPORT_TIMEOUT) -> Candidate:
    """Load ``module:attribute`` (importable from the current directory or the environment) or a built-in name.

    Importing the module may take at most ``import_timeout`` seconds (``None``: no limit); a module whose import
    does not finish by then is a :class:`LoadError`.
    """
    if protocol not in (None, "eager", "cooperative"):
        raise LoadError(f"--protocol must be eager or cooperative, not {protocol!r}")
    if ":" not in target:
        if target in BUILTIN_NAMES:
            c = _builtin(target)
            if protocol:
                c.protocol = protocol
            if kind:
                c.kind = kind
            return c
        raise LoadError(f"target {target!r} is neither module:attribute nor a built-in name ({', '.join(BUILTIN_NAMES)})")
    modname, _, attr = target.partition(":")
    if not modname or not attr:
        raise LoadError(f"target {target!r}: expected module:attribute")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        mod = _import_within(modname, import_timeout)
    except TimeoutError:
        raise LoadError(f"target {target!r}: importing {modname!r} did not finish within {import_timeout:g} s "
                        f"(does the module block or loop at import?)") from None
    except ModuleNotFoundError as e:
        if e.name and (modname == e.name or modname.startswith(e.name + ".")):
            raise LoadError(f"target {target!r}: no module named {modname!r}") from None
        raise LoadError(f"target {target!r}: importing {modname!r} failed: ModuleNotFoundError: {e}") from None
    except BaseException as e:  # noqa: BLE001 - a module that raises on import (even SystemExit) is a load error
        raise LoadError(f"target {target!r}: importing {modname!r} raised {type(e).__name__}: {e}") from None
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise LoadError(f"target {target!r}: module {modname!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    try:
        return candidate_from_object(obj, target=target, protocol=protocol, kind=kind)
    except LoadError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. a `protocol` or `name` property that raises: a load error
        raise LoadError(f"target {target!r}: reading it as an assignor raised {type(e).__name__}: {e}") from None


# -------------------------------------------------------------------------------------------- calls


@dataclass
class CallResult:
    """Outcome of one call: ``assignment`` when it succeeded, else ``failure`` (raised / timeout / malformed)."""

    assignment: dict[str, list[tuple[str, int]]] | None
    failure: str | None
    message: str
    seconds: float
    cpu_seconds: float = 0.0  #: CPU time of the thread that ran the call (0 when it was cut off)


def _async_raise(thread: threading.Thread, exc: type[BaseException]) -> None:
    if thread.ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc))


class _Worker:
    def __init__(self) -> None:
        # (a call and its arguments, or None: stop) in; ((kind, value), seconds, CPU seconds) out
        self.inbox: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = queue.Queue()
        self.outbox: queue.Queue[tuple[tuple[str, Any], float, float]] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="groupspec-candidate", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.inbox.get()
            if job is None:
                return
            fn, args = job
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                res = ("ok", fn(*args))
            except BaseException as e:  # noqa: BLE001 - the candidate may raise anything
                res = ("raised", e)
            try:
                self.outbox.put((res, time.perf_counter() - t0, time.thread_time() - c0))
            except BaseException:  # noqa: BLE001 - an async TimeoutError may land here; the result is void anyway
                pass


class CallRunner:
    """Calls a candidate with a per-call time limit; a call that overruns is abandoned, the next gets a new worker."""

    def __init__(self, call_timeout: float | None = 5.0):
        self.call_timeout = call_timeout if call_timeout and call_timeout > 0 else None
        self._worker: _Worker | None = None
        self.timeouts = 0

    def run(self, cand: Candidate, ppt: dict[str, int], subs: dict[str, dict[str, Any]],
            fn: Callable[[dict[str, int], dict[str, dict[str, Any]]], Any] | None = None,
            timeout: float | None = None) -> CallResult:
        """Call ``fn`` (default: the candidate's own call) on copies of the inputs; decode its result.
        ``timeout`` overrides the runner's per-call limit for this call."""
        counts, racks = call_args(ppt)  # a racked input passes the replica racks as ``partition_racks=``
        args = (copy.deepcopy(counts), copy.deepcopy(subs))
        fn = fn or cand.call
        if racks:
            fn = functools.partial(fn, **copy.deepcopy(racks))
        if self._worker is None:
            self._worker = _Worker()
        w = self._worker
        w.inbox.put((fn, args))
        limit = timeout if timeout is not None else self.call_timeout
        try:
            (kind, value), secs, cpu = w.outbox.get(timeout=limit)
        except queue.Empty:
            self.timeouts += 1
            self._worker = None
            _async_raise(w.thread, TimeoutError)
            w.inbox.put(None)
            what = "per-call limit" if timeout is None else "shortened per-call limit (after the hang budget)"
            return CallResult(None, "timeout", f"no answer within the {what} of {limit:g} s", float(limit or 0))
        if kind == "raised":
            e = value
            return CallResult(None, "raised", f"raised {type(e).__name__}: {e}".rstrip(": "), secs, cpu)
        if inspect.isawaitable(value):  # an assign that returns a coroutine (not declared async: no load error)
            what = f"a coroutine ({value.__qualname__})" if inspect.iscoroutine(value) else \
                f"an awaitable ({type(value).__name__})"
            if inspect.iscoroutine(value):
                value.close()  # never awaited, and it will not be: closed, so Python does not warn of it
            return CallResult(None, "malformed", f"malformed output: assign returned {what}, not an assignment; "
                              f"{COROUTINE_HINT}", secs, cpu)
        try:
            out = cand.decode(value)
        except Malformed as e:
            return CallResult(None, "malformed", f"malformed output: {e}", secs, cpu)
        except Exception as e:  # noqa: BLE001 - a decoder failing on odd output is malformed output too
            return CallResult(None, "malformed", f"malformed output: {type(e).__name__}: {e}", secs, cpu)
        return CallResult(out, None, "", secs, cpu)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.inbox.put(None)
            self._worker = None
