"""The Memory service: the one layer under HTTP, MCP, the CLI and the Python API.

Adapters import from here (and from ``halls.models``, ``halls.errors``,
``halls.config``), never from the store, recall or consolidate packages.
"""

# The default threshold of recall's calibrated relevance (halls.recall.relevance).
from halls.recall.relevance import DEFAULT_MIN_RELEVANCE
from halls.service.access import Action, Grant, Tokens
from halls.service.archive import ImportReport, archive_encrypted
from halls.service.audit import AuditLog, acting_as
from halls.service.dreams import RunOutcomes
from halls.service.jobs import JOB_ID, Job
from halls.service.memory import Memory
from halls.service.migrate import Copied, Place, migrate_stores
from halls.service.notation import Format as ContextFormat
from halls.service.session import DEFAULT_BUDGET, MAX_BUDGET, MIN_BUDGET, ContextBlock
from halls.service.shared import MAX_STORES, store_names
from halls.service.stores import check_store_name
from halls.service.texts import MAX_TEXT_IDS, RecordTexts

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_MIN_RELEVANCE",
    "MAX_BUDGET",
    "MIN_BUDGET",
    "MAX_TEXT_IDS",
    "MAX_STORES",
    "Action",
    "AuditLog",
    "Grant",
    "ContextBlock",
    "ContextFormat",
    "Copied",
    "ImportReport",
    "JOB_ID",
    "Job",
    "Memory",
    "Place",
    "RecordTexts",
    "RunOutcomes",
    "migrate_stores",
    "Tokens",
    "acting_as",
    "archive_encrypted",
    "check_store_name",
    "store_names",
]
