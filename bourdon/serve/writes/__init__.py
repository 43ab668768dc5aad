"""The write and history answers: commit, versions, explain, rollback, as wire-shaped dicts.

One function per tool of the Bourdon reference (``commit.commit_to_federation``,
``history.list_memory_versions``, ``history.explain_memory_change``,
``rollback.rollback_agent_memory``), over the ``Library``. Authorization is decided before
these are called (``policy``); they only need to know whether a write is staged, and the widest
visibility the caller may see (``level``: ``None`` for the local operator), so no count in an
answer includes a row hidden from it (``counts.visible_counts``).

Every answer carries the reference's keys with the reference's meaning (issue 11: clients
written for it read ``entities_added``, ``total_notes``, ``found``, ``restored_version``...)
next to bourdon's own.
"""
