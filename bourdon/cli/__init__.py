"""The bourdon command: the entry point (main), shared helpers, and one module per command group."""
