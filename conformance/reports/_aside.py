"""Writing one report in a forked child while this process writes the others.

A matrix's four reports of 260,000 results take 45 s one after another on one core, and
report.html is nearly half of that. A forked child shares the run as it is in memory (a
pickle round trip to a spawned process costs as much as it would save), so the page is
written beside the others on a second core. A fork is made only where it is safe and pays:
on Linux, with a second CPU this process may run on, a large run, and a process with a single
thread (a thread the child does not have cannot leave a lock held in it). Otherwise, and when
the child fails, the report is written here: a report is never lost to the child.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ._files import write_atomically

#: Results below which a report is written here: forking would save less than it costs.
LARGE = 20_000


def forkable(results: int) -> bool:
    """Whether a child may write a report of a run of `results` results."""
    if sys.platform != "linux" or results < LARGE or threading.active_count() != 1:
        return False
    try:
        # Threads started by native code are not Python's threads; the kernel counts both.
        single = len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False
    return single and len(os.sched_getaffinity(0)) > 1


def write_aside(path: Path, render: Callable[[], str], *, fork: bool) -> Callable[[], None]:
    """Start writing `render()` to `path`: in a forked child when `fork`, else when the
    returned function is called. That function waits for the child, and writes the report
    here if the child did not."""
    if not fork:
        return lambda: write_atomically(path, render())
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:  # the child: write, and leave without running the parent's exit handlers
        status = 1
        try:
            write_atomically(path, render())
            status = 0
        finally:
            os._exit(status)

    def wait() -> None:
        _, status = os.waitpid(child, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            write_atomically(path, render())  # as if no child had tried: its error raises here

    return wait
