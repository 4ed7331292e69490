"""groupspec: an executable formal model of the Kafka consumer-group rebalance protocol.

Sub-packages (one import namespace):

* ``groupspec.model``     — the specification (top-level folder ``model/``)
* ``groupspec.reference`` — the reference implementation (folder ``reference/``)
* ``groupspec.proofs``    — Z3 encodings of the model (folder ``proofs/``)
* ``groupspec.cli``       — the ``groupspec`` command (thin: parsing and presentation)
"""

__version__ = "0.1.0"


def __getattr__(name: str):  # lazy, so that `import groupspec` stays cheap
    if name in ("check_assignor", "assert_assignor"):
        from . import assignor_check

        return getattr(assignor_check, name)
    raise AttributeError(f"module 'groupspec' has no attribute {name!r}")
