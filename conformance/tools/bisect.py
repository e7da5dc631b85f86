"""`conformance bisect`: the first release of a library where a case's verdict changed.

    found = bisect_releases(versions, judge)   # judge(version) -> Probe

The search is git bisect's over the releases in order: the verdict at the older bound is the
"before"; a release judged the same moves the older bound up, one judged otherwise moves the
newer bound down, until they are neighbours. A release whose environment cannot be built (or
whose adapter cannot start) is skipped: the search probes the nearest release beside it, and
when every release between the bounds is skipped it reports the range the change lies in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from conformance.errors import ConformanceError

#: The verdicts of a case at one release: check -> verdict (PASS, FAIL, ...).
Verdicts = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Probe:
    """One release judged: its verdicts, or why it could not be."""

    version: str
    verdicts: Verdicts | None = None
    #: Why the release was skipped (an environment that failed to build, an adapter that
    #: could not start), when `verdicts` is None.
    skipped: str = ""
    #: The version the adapter reported it loaded, when it differs from `version`.
    loaded: str = ""

    def summary(self) -> str:
        if self.verdicts is None:
            return "skipped"
        counts: dict[str, int] = {}
        for verdict in self.verdicts.values():
            counts[verdict] = counts.get(verdict, 0) + 1
        if len(self.verdicts) == 1:
            return next(iter(self.verdicts.values()))
        return ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))


@dataclass(slots=True)
class Bisection:
    """What the search found: the last release judged as the older bound was, the first
    judged otherwise, and every release probed (in the order probed)."""

    probes: list[Probe] = field(default_factory=list)
    last_before: str | None = None
    first_after: str | None = None
    #: Releases between the two that were skipped (the change lies somewhere in them).
    untested: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.first_after is not None

    def probe(self, version: str) -> Probe:
        return next(p for p in self.probes if p.version == version)

    def changed_checks(self) -> list[str]:
        """The checks whose verdict differs between the two releases."""
        if self.last_before is None or self.first_after is None:
            return []
        before = self.probe(self.last_before).verdicts or {}
        after = self.probe(self.first_after).verdicts or {}
        return [c for c in {**before, **after} if before.get(c) != after.get(c)]


class BoundSkipped(ConformanceError):
    """A bound of the search could not be judged, its probe says why (exit status 2)."""

    def __init__(self, probe: Probe) -> None:
        super().__init__(f"{probe.version}: {probe.skipped}")
        self.probe = probe


def bisect_releases(versions: Sequence[str], judge: Callable[[str], Probe]) -> Bisection:
    """Search `versions` (oldest first; the first and last are the bounds) for the first
    release judged otherwise than the first. Raises BoundSkipped when a bound cannot be
    judged; `changed` is False when the bounds are judged alike."""
    found = Bisection()
    cache: dict[str, Probe] = {}

    def probe(index: int) -> Probe:
        version = versions[index]
        if version not in cache:
            cache[version] = judge(version)
            found.probes.append(cache[version])
        return cache[version]

    if not versions:
        return found
    low, high = 0, len(versions) - 1
    before = probe(low)
    if before.verdicts is None:
        raise BoundSkipped(before)
    if high == low:
        return found
    after = probe(high)
    if after.verdicts is None:
        raise BoundSkipped(after)
    if after.verdicts == before.verdicts:
        return found
    while high - low > 1:
        middle = _judged_between(low, high, probe)
        if middle is None:
            found.untested = [versions[i] for i in range(low + 1, high)]
            break
        if probe(middle).verdicts == before.verdicts:
            low = middle
        else:
            high = middle
    found.last_before, found.first_after = versions[low], versions[high]
    return found


def _judged_between(low: int, high: int, probe: Callable[[int], Probe]) -> int | None:
    """The release nearest the middle of (low, high) that can be judged, or None."""
    middle = (low + high) // 2
    # The middle, then outwards from it, alternating sides.
    order = sorted(range(low + 1, high), key=lambda i: (abs(i - middle), i))
    for index in order:
        if probe(index).verdicts is not None:
            return index
    return None
