"""Running the reference: the deterministic simulators, the network, the clock, scenarios, traces, script replay.

Owns: ``simulator.py`` (the classic and Connect simulator: brokers, members, ``network.py``'s seeded network,
failover), ``scenarios.py`` (the named stories of ``groupspec simulate``), ``records.py`` (producers,
fetching, commit strategies, a ledger), ``consumer_sim.py`` (the KIP-848 simulation), ``migration_sim.py`` (an
online upgrade), ``virtual_clock.py`` (the one event clock every simulator of the reference runs on), ``actor_sim.py`` (the
one driver of actors on the one contract, the network as a parameter: the history groups run on it), ``trace.py`` (the trace writer
and reader), ``replay.py`` (coordinator script replay: one driver, a plug-in per protocol family,
``replay_classic.py`` and ``replay_consumer.py``).

May import: every other part of ``groupspec.reference`` (classic, consumer, migration, connect, assignors,
errors); nothing in ``reference/`` but ``history`` imports it.
"""
from __future__ import annotations

from . import trace
from .actor_sim import ActorSim, Address, Links, NetworkLinks, UniformLinks
from .consumer_sim import SCENARIOS as CONSUMER_SCENARIOS
from .consumer_sim import STEP_MS, ConsumerScenarioError, ConsumerSimulation, process_name, run_consumer_scenario
from .migration_sim import EXPECT_VIOLATIONS, MIGRATION_SCENARIOS, MigrationScenarioError, run_migration_scenario
from .network import Envelope, Network, NetworkConfig
from .records import STRATEGIES, Ledger, RecordFlow, RecordsConfig, strategy_config
from .replay import FAMILIES, ReplayFamily, ScriptError, family_of, run_script
from .replay_classic import Replayer, Step, json_type, parse_script
from .replay_consumer import is_consumer_script, read_consumer_script, run_consumer_script
from .scenarios import (PROTOCOLS, SCENARIOS, ScenarioError, ScenarioOptions, ScenarioReport, member_config,
                        run_scenario)
from .simulator import SimConfig, SimProc, Simulator, StepRecord
from .trace import Ownership, TraceError, dumps_jsonl, ownership, read_trace, write_trace
from .virtual_clock import TOPIC, VirtualClock

__all__ = [
    "trace",
    "ActorSim", "Address", "Links", "NetworkLinks", "UniformLinks",
    "Simulator", "SimConfig", "SimProc", "StepRecord", "Network", "NetworkConfig", "Envelope",
    "SCENARIOS", "PROTOCOLS", "ScenarioOptions", "ScenarioReport", "ScenarioError", "run_scenario", "member_config",
    "STRATEGIES", "RecordsConfig", "RecordFlow", "Ledger", "strategy_config",
    "CONSUMER_SCENARIOS", "STEP_MS", "ConsumerScenarioError", "ConsumerSimulation", "run_consumer_scenario",
    "process_name",
    "MIGRATION_SCENARIOS", "EXPECT_VIOLATIONS", "MigrationScenarioError", "run_migration_scenario",
    "VirtualClock", "TOPIC",
    "dumps_jsonl", "write_trace", "read_trace", "Ownership", "ownership", "TraceError",
    "run_script", "family_of", "FAMILIES", "ReplayFamily", "ScriptError", "parse_script", "Step", "Replayer", "json_type",
    "is_consumer_script", "read_consumer_script", "run_consumer_script",
]
