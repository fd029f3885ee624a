"""The Memory service: the one layer under HTTP, MCP, the CLI and the Python API.

Adapters import from here (and from ``halls.models``, ``halls.errors``,
``halls.config``), never from the store, recall or consolidate packages.
"""

from halls.service.dreams import RunOutcomes
from halls.service.memory import Memory
from halls.service.migrate import Copied, Place, migrate_stores
from halls.service.session import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, ContextBlock

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_BUDGET",
    "MIN_BUDGET",
    "ContextBlock",
    "Copied",
    "Memory",
    "Place",
    "RunOutcomes",
    "migrate_stores",
]
