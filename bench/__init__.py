"""Benchmarks of simple-a2a against the official SDK (a2a-sdk 1.3.0) and a raw ASGI ceiling.

Run ``bash bench/run`` (or ``.venv/bin/python -m bench``); ``BENCH_QUICK=1`` for a smoke run.
Never part of the test suite.
"""
