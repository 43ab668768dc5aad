"""Federation: peer configuration, the bounded fan-out client with its breaker, and merging peer
answers.
"""
