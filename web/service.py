"""The `TableService` protocol: now in ``table.contract.service`` (the core's contract, without Flask); importable from here as before."""

from table.contract.service import *  # noqa: F403
from table.contract.service import __all__  # noqa: F401
