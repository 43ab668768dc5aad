"""Replication: sync of a library through git remotes, and the state each remote leaves behind."""
