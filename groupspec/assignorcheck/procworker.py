"""Worker process for I10p: ``python -m groupspec.assignorcheck.procworker TARGET CALL_TIMEOUT``.

Loads TARGET (as :func:`groupspec.assignorcheck.load.load_candidate` does), prints ``{"ready": true}`` (or
``{"load_error": "..."}``), then answers each input line ``[partitions_per_topic, subscriptions, partition_racks]``
(the racks ``null`` for a rack-less input) with one line
``{"out": {member: [[topic, partition], ...]}}`` or ``{"failure": "..."}``. Those lines go out on the
descriptor stdout had when the worker started; the candidate's own prints (Python's and C code's) go to stderr,
so they cannot break the exchange. It is started by
:mod:`groupspec.assignorcheck.determinism` with a chosen ``PYTHONHASHSEED``; it imports no Hypothesis.
"""
from __future__ import annotations

import json
import logging
import os
import sys


def main(argv: list[str]) -> int:
    from .core import canonical
    from .load import CallRunner, LoadError, load_candidate
    from .racks import with_racks

    logging.getLogger().addHandler(logging.NullHandler())
    target, timeout = argv[0], float(argv[1])
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the answers' channel: stdout as it was at the start
    os.dup2(2, 1)  # from here on, fd 1 and sys.stdout are stderr: what the candidate prints goes there
    sys.stdout = sys.stderr
    try:
        cand = load_candidate(target)
    except LoadError as e:
        out.write(json.dumps({"load_error": str(e)}) + "\n")
        out.flush()
        return 2
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    runner = CallRunner(timeout)
    for line in sys.stdin:
        ppt, subs, racks = json.loads(line)
        res = runner.run(cand, with_racks(ppt, racks), subs)
        if res.assignment is None:
            out.write(json.dumps({"failure": res.message}) + "\n")
        else:
            out.write(json.dumps({"out": canonical(res.assignment)}) + "\n")
        out.flush()
    runner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
