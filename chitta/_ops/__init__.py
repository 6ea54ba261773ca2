"""Op payload schemas, split by area. The public face is :mod:`chitta.ops`."""
