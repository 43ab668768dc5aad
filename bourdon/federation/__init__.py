"""Federation: asking the bourdon servers of other machines, depth 1, and merging what they say.

``peers`` (who they are: ``peers.yaml``, ``--peer``), ``client`` (the bounded fan-out under one
deadline), ``transport`` (the one capped HTTP client), ``answers`` (merging peer rows into a
local answer), ``join`` (the path every federated tool takes). Nothing here reads the library,
the index or the members: the server passes values in.
"""
