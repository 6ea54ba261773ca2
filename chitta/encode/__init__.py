"""Encoders: dense embedders, the learned sparse encoder, binarisers.

``chitta.encode.sparse`` holds the sparse encoder (64 of 16,384 features) and
its learning rule.
"""
