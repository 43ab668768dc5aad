"""Helpers the readers share: paths and privacy, front matter, store files, SQLite stores,
assembling rows.
"""
