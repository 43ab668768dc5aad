"""Ingest: the export pipeline (reader, redaction, visibility, erosion guard, commit), its
watermarks, and hook install.
"""
