"""The only code in bourdon that touches git, and the only code that starts processes.

Every git process runs with a scrubbed environment: no inherited ``GIT_*`` variables, no system
or global configuration, repository hooks and fsmonitor disabled, and ``core.fsync=all`` so an
acknowledged commit survives a power cut on honest storage (``process``).

A commit never goes through git's shared index (the first cause of ``index.lock`` failures in
git-backed tools). bourdon writes the blob, tree and commit objects itself, as loose objects
(zlib + fsync, the format git documents; ``objects``), and then moves the branch with a
compare-and-swap on the branch ref (git's lock-file protocol, in-process; ``refs``): that ref
update is the commit point. Writing the objects in-process takes about a millisecond where
``git commit`` takes 15-25 ms. A whole history at once goes through one ``git fast-import``
(``fastimport``). Nothing of git packs those loose objects, so after each write ``packing``
starts a background ``git repack`` when ``git gc --auto`` would.

Objects are read through one long-lived ``git cat-file --batch`` process (well under a
millisecond per read), guarded by a lock because callers may be on several threads. ``repo``
holds ``GitRepo``, the one object the rest of the store talks to.
"""
