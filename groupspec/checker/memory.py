"""What a search costs in memory: resident memory now and at its peak (Linux ``/proc``; elsewhere the
C library's ``ru_maxrss``), so that ``groupspec check`` can report peak memory and memory per state."""
from __future__ import annotations

import os
import resource

__all__ = ["rss_bytes", "reset_peak", "peak_bytes"]


def rss_bytes() -> int:
    """This process's resident memory now, or 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def reset_peak() -> bool:
    """Start the peak count afresh (Linux >= 4.0: ``clear_refs`` 5 resets VmHWM), so that the peak
    reported is the search's own and not an earlier one's in the same process."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_bytes() -> int:
    """Peak resident memory since :func:`reset_peak` (VmHWM), else since the process started."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
