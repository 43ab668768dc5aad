"""The store: the Library facade (the only writer of a library), the git module (the only code that
starts processes), durable writes, history, recovery, staging and provenance.
"""
