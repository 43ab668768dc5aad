"""Helpers the test modules share."""
