"""Characters a reader cannot see, by Unicode general category: one definition for every
place that must show them escaped rather than as themselves."""

from __future__ import annotations

#: Controls, format characters, surrogates, private use, unassigned code points, and
#: separators (spaces, line and paragraph separators): nothing, or nothing distinct, shows.
INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
#: Combining marks: they show only on the character before them, so alone they are unseen.
COMBINING = frozenset({"Mn", "Me"})
