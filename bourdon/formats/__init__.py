"""Formats: strict YAML, the manifest schema (strict validation of what bourdon writes, lenient
reading of what it serves), and the files shipped with bourdon. Pure values, no I/O beyond
reading.
"""
