"""The store: the Library facade (the only writer of a library) over modules with one job each
(reading manifests, history, the write protocol, the write lock and crash recovery, staging,
creation and adoption, provenance trailers, durable writes), and the git package (the only code
that starts processes).
"""
