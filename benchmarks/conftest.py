"""Benchmarks are collected only when asked for: ``pytest benchmarks``."""
