"""The MCP tools, one module per group; ``halls.mcp.server`` composes them.

- ``base``: what every group declares its tools with (the registrar, the
  shared argument types, the hints each tool carries);
- ``writes``: what an agent hands memory (``remember``, ``journal``,
  ``submit_brief``);
- ``loops``: open loops (``loops``: add, complete, cancel, list);
- ``records``: one memory by id, and a tier's newest (``memory``);
- ``recall``: reading memory back (``recall``, ``context``);
- ``forget``: corrections and deletions (``flag_forget``, ``forget_about``,
  ``delete_memory``, ``delete_store``);
- ``admin``: the state of a store (``consolidate``, ``stats``, ``audit``);
- ``archive``: a whole store to and from files (``export_store``,
  ``import_store``, ``backup_store``).
"""
