"""Benchmarks are collected only when asked for: ``pytest benchmarks``.

Each benchmark chooses its embedder explicitly (``embedder=None`` measures the
log and the indexes; the model's own cost is measured in bench_embed.py and
bench_recall.py).
"""
