"""Merging rows: the two-way merge of a commit and the three-way merge of a sync. Pure functions on
manifests.
"""
