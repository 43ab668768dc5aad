"""Ingest: the export pipeline (reader, redaction, visibility, erosion guard, commit), its
watermarks and hook failure log, export-all, the hooks' install, and what the hooks run.
"""
