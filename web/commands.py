"""The dashboard's commands: now in ``table.contract.commands`` (the core's contract, without Flask); importable from here as before."""

from table.contract.commands import *  # noqa: F403
from table.contract.commands import __all__  # noqa: F401
