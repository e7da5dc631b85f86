"""The CPU time an implementation process has used, for timing it apart from machine load.

Wall-clock time of a request counts whatever else the machine runs; CPU time counts only the
implementation's own work. Linux keeps it per thread in nanoseconds
(`/proc/<pid>/task/<tid>/schedstat`, first field), where `/proc/<pid>/stat` counts in clock
ticks of 10 ms, too coarse for a stream of a few milliseconds. The implementation runs in a
process group of its own (`process.Process`), so a wrapper's children (`npx`, `uv run`, a
shell script) are counted with it.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


class GroupClock:
    """The CPU seconds used by the processes of one process group.

    Its members are found once, on the first reading (scanning /proc takes milliseconds on a
    busy machine, far more than the streams timed); a process the group starts later is not
    counted, and one that ends drops out of the sum."""

    def __init__(self, group: int) -> None:
        self.group = group
        self._members: list[int] | None = None

    def seconds(self) -> float | None:
        """CPU seconds used so far, or None where the system does not say (no /proc, no
        per-thread figures, the leader gone)."""
        if self._members is None:
            self._members = _members(self.group)
        total = 0
        for pid in self._members:
            nanoseconds = _process_nanoseconds(pid)
            if nanoseconds is None:
                if pid == self.group:
                    return None
                continue
            total += nanoseconds
        return total / 1e9


def _members(group: int) -> list[int]:
    try:
        entries = os.listdir(PROC)
    except OSError:
        return [group]
    pids = (int(entry) for entry in entries if entry.isdigit())
    return [group, *(pid for pid in pids if pid != group and _group_of(pid) == group)]


def _group_of(pid: int) -> int | None:
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
    except OSError:  # gone, or not ours to read
        return None
    # `pid (command) state ppid pgrp ...`: the command may hold spaces and parentheses.
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[2]) if len(fields) > 2 else None


def _process_nanoseconds(pid: int) -> int | None:
    tasks = PROC / str(pid) / "task"
    try:
        threads = os.listdir(tasks)
    except OSError:
        return None
    total = 0
    for thread in threads:
        try:
            total += int((tasks / thread / "schedstat").read_bytes().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total
