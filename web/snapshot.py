"""The snapshot's shape: now in ``table.contract.snapshot`` (the core's contract, without Flask); importable from here as before."""

from table.contract.snapshot import *  # noqa: F403
from table.contract.snapshot import __all__  # noqa: F401
