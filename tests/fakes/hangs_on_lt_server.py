"""The reference behind `conformance.server` (which answers each batch read in one write),
except that it hangs on every chunk that is exactly `<`: issue 12's 90-second target.

    conformance run --impl "cmd:python tests/fakes/hangs_on_lt_server.py"
"""

from conformance.server import serve
from tests.fakes.hostile_impls import HangsOnLessThan

serve(HangsOnLessThan, implementation={"name": "hangs-on-lt", "version": "1", "language": "python"})
