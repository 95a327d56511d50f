"""The payload checks: now in ``table.contract.payloads`` (the core's contract, without Flask); importable from here as before."""

from table.contract.payloads import *  # noqa: F403
from table.contract.payloads import __all__  # noqa: F401
