"""The MCP server: the factory, the guard, the read and write tools, resources, the HTTP door and
its configuration.
"""
