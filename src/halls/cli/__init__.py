"""The ``halls`` command line: a composition root, like the server.

One module per family of commands; importing them registers each on ``main``.
"""

from halls.cli import (  # noqa: F401 - registers the commands
    agents,
    archive,
    audit,
    bench,
    dreams,
    installs,
    memory,
    migrate,
    scopes,
    serve,
)
from halls.cli._app import main

__all__ = ["main"]
