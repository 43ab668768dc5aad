"""Federation: asking the bourdon servers of other machines, depth 1, and merging what they say.

``peers`` (who they are: ``peers.yaml``, ``--peer``), ``client`` (the bounded fan-out under one
deadline, and merging the answers), ``transport`` (the one capped HTTP client). Nothing here
reads the library, the index or the members: the server passes values in.
"""
