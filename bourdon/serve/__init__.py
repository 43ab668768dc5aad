"""The MCP server: ``server.create_server`` wires the rooms below into one ``MCPServer``.

``guard`` (authorize, audit, convert errors, join the peers' answers), the tools by what they
serve (``read_tools``, ``history_tools``, ``turn_tools``, ``caller``, ``write_tools``,
``status_tool``), ``resources``, the write answers (``writes/``), ``watch`` (edits that are
not commits), the HTTP door (``httpgate``) and the configuration the factory reads
(``config``). Only ``config`` and the factory read the environment.
"""
