"""The web view: server-rendered pages under ``/ui/`` of the HTTP server (``bourdon ui``).

Pages ask the same tools the MCP clients call, through the same guard, as the session's
caller, so visibility, grants and the audit apply to every page exactly as to a tool call.
``sessions`` keeps who is logged in; ``view`` is what a page handler is given; ``app``
routes, checks the session and the CSRF token, and renders; ``pages`` holds one module per
page.
"""
