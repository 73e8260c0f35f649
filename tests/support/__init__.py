"""Builders shared by test modules: IR fixtures, writer calls, the golden samples.

Test modules import from here (and from ``tests/helpers.py``), never from each other.
"""
