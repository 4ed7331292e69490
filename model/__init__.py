"""The executable specification of the Kafka consumer-group rebalance protocol.

It follows Apache Kafka 4.3.1 (the pinned release; the rules that depend on the release, with the release that
introduced each: docs/versions.md).

Start reading at :mod:`groupspec.model.classic` (the JoinGroup/SyncGroup protocol, step by step),
then one page per variant: :mod:`~groupspec.model.eager`, :mod:`~groupspec.model.static`,
:mod:`~groupspec.model.cooperative`, :mod:`~groupspec.model.static_cooperative`,
:mod:`~groupspec.model.static_leader` (the static leader's metadata snapshot),
:mod:`~groupspec.model.connect_delayed`, the protocol vote and the eager-to-cooperative upgrade
:mod:`~groupspec.model.upgrade`, the next-generation
:mod:`~groupspec.model.consumer` (KIP-848) and the migration between the two,
:mod:`~groupspec.model.migration`, and the historical
:mod:`~groupspec.model.zookeeper` and :mod:`~groupspec.model.coordinator_assigns`. The properties
every variant must have are in :mod:`~groupspec.model.properties`; the deliberately broken variants
that prove the checks can fail are in :mod:`~groupspec.model.broken`.

A protocol object (``make(name, config)``) is a :class:`~groupspec.model.spec.Spec`: it offers
``init_states()``, ``successors(s)`` (every enabled action with the state it leads to, in a fixed order),
``enabled(s)``, ``step(s, a)``, the questions the properties ask (``converged``, ``commit_accepted``, ...),
and says which properties and faults apply to it and which other encodings of its rules exist.
"""
from __future__ import annotations

from .broken import (
    ClassicToConsumerCrashLingers,
    ClassicToConsumerEmptyGroupReset,
    ClassicToConsumerEpochRollback,
    ClassicToConsumerUpgradeReplaces,
    ClassicToConsumerUnfencedClassicCommits,
    ClassicToConsumerDowngradeMemberGeneration,
    ClassicToConsumerNoRejoin,
    ClassicToConsumerOwnedIgnored,
    ClassicToConsumerShortAssignment,
    ClassicToConsumerSyncTarget,
    ConnectHoldOutlivesGroup,
    ConnectIgnoresRevocation,
    ConnectNoScheduledRebalance,
    ConsumerCommitAnyEpoch,
    ConsumerFencedKeepsPartitions,
    ConsumerNoEpochBump,
    ConsumerNoWaitForRelease,
    ConsumerRejoinFenced,
    ConsumerSecondHeartbeat,
    ConsumerUnfencedCommits,
    CooperativeDirectTransfer,
    CooperativeFlappy,
    CoordinatorAssignsNoRevoke,
    EagerGroupMaxSizeOne,
    EagerJoinGenerationAhead,
    EagerJoinKeepsGeneration,
    EagerNoRevoke,
    EagerSyncBumpsGeneration,
    EagerSyncRollsBackGeneration,
    UnfencedCommits,
    UpgradeOneBounce,
    UpgradeUnvalidated,
)
from .connect_delayed import ConnectDelayed, ConnectKeepWork
from .consumer import Consumer, ConsumerStatic
from .cooperative import Cooperative
from .coordinator_assigns import CoordinatorAssigns
from . import actions, consumer, consumer_flight, migration, properties
from .core import (FAULTS, NO_GENERATION, TIMING_FAULTS, Client, Config, Group, GroupStatus, Id, Inbox, MemberStatus, Proc,
                   Record, Reply, State, bits)
from .eager import Eager
from .migration import ClassicToConsumer, ClassicToConsumerAcked
from .spec import ASSIGNOR_NAMES, Spec, SpecBase
from .assignors import ASSIGNORS, kept_claims, resolve_claims
from .properties import ACTIONS, SAFETY
from .symmetry import forget_dead_fields
from .static import Static
from .static_cooperative import StaticCooperative
from .static_leader import StaticLeaderSnapshot
from .upgrade import EagerToCooperative, upgraded
from .zookeeper import ZkState, ZooKeeper

CORRECT: dict[str, type[SpecBase]] = {cls.name: cls for cls in (Eager, Static, Cooperative, ConnectDelayed, ZooKeeper, CoordinatorAssigns,
                                     StaticCooperative, ConnectKeepWork, EagerToCooperative, StaticLeaderSnapshot)}
CORRECT.update({cls.name: cls for cls in (Consumer, ConsumerStatic, ClassicToConsumer, ClassicToConsumerAcked)})
BROKEN: dict[str, type[SpecBase]] = {cls.name: cls for cls in (CooperativeDirectTransfer, EagerNoRevoke, UnfencedCommits, CooperativeFlappy)}
BROKEN.update({cls.name: cls for cls in (ConsumerNoWaitForRelease, ConsumerUnfencedCommits, ConsumerNoEpochBump,
                                         ConsumerCommitAnyEpoch, ConsumerFencedKeepsPartitions)})
BROKEN.update({cls.name: cls for cls in (ClassicToConsumerSyncTarget, ClassicToConsumerNoRejoin)})
BROKEN.update({cls.name: cls for cls in (ClassicToConsumerDowngradeMemberGeneration, ClassicToConsumerOwnedIgnored)})
BROKEN.update({cls.name: cls for cls in (UpgradeOneBounce, UpgradeUnvalidated)})
BROKEN.update({cls.name: cls for cls in (ConnectHoldOutlivesGroup, ConnectIgnoresRevocation)})
BROKEN.update({cls.name: cls for cls in (EagerJoinGenerationAhead, ClassicToConsumerShortAssignment,
                                         ClassicToConsumerCrashLingers)})  # issue 30: the fifth campaign's gaps
BROKEN.update({CoordinatorAssignsNoRevoke.name: CoordinatorAssignsNoRevoke})  # issue 30: the classic family's full run
BROKEN[ConnectNoScheduledRebalance.name] = ConnectNoScheduledRebalance  # issue 30: the classic family's survivors (cjoin)
BROKEN.update({cls.name: cls for cls in (ClassicToConsumerUpgradeReplaces, ClassicToConsumerEmptyGroupReset,
                                         ClassicToConsumerEpochRollback,
                                         ClassicToConsumerUnfencedClassicCommits)})  # issue 30: the migration family's full run
BROKEN.update({cls.name: cls for cls in (ConsumerRejoinFenced, ConsumerSecondHeartbeat)})  # issue 30: the KIP-848 last eleven
BROKEN.update({cls.name: cls for cls in (EagerJoinKeepsGeneration, EagerSyncBumpsGeneration, EagerSyncRollsBackGeneration,
                                         EagerGroupMaxSizeOne)})  # issue 30: the classic survivors (cprops)
VARIANTS = {**CORRECT, **BROKEN}
# Every variant lists its assignors as ``assignors`` (the first is its default; ``SpecBase``: ASSIGNOR_NAMES).


def make(name: str, config: Config) -> Spec:
    """The protocol variant ``name`` on the finite instance ``config``."""
    try:
        cls = VARIANTS[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; choose from {', '.join(VARIANTS)}") from None
    return cls(config)


__all__ = [
    "actions", "consumer", "consumer_flight", "migration", "properties",  # pages the tools read by name
    "Config", "FAULTS", "VARIANTS", "CORRECT", "BROKEN", "ASSIGNOR_NAMES", "Spec", "SpecBase", "make",
    # what the tools read: the state records (core.py), the properties, the assignors, the symmetry reduction
    "NO_GENERATION", "TIMING_FAULTS", "GroupStatus", "Id", "MemberStatus", "Proc", "Reply", "State", "ZkState", "bits",
    "Client", "Group", "Inbox", "Record",
    "ACTIONS", "SAFETY", "ASSIGNORS", "forget_dead_fields",
    "resolve_claims", "kept_claims",  # the sticky assignor's claim resolution (assignor:sticky-claims reads it)
    "upgraded",  # the rolling upgrade is over (the client checks hold it to the clients)
]
