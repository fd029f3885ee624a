"""Benchmarks that drive halls as a user would: over HTTP, against a live server."""
