"""Formats: strict YAML, the manifest schema, and the files shipped with bourdon. Pure values, no
I/O beyond reading.
"""
