"""The ``halls`` command line: a composition root, like the server.

One module per family of commands; importing them registers each on ``main``.
"""

from halls.cli import agents, bench, dreams, memory, migrate  # noqa: F401 - registers the commands
from halls.cli._app import main

__all__ = ["main"]
