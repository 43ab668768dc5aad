"""Queries over a library: the index, the fuzzy matcher, recognition, the read tools' answers,
paging and turn context.
"""
