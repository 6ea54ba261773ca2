"""research/ holds lab scripts, not tests: pytest collects nothing here, even when pointed at it."""

collect_ignore_glob = ["*.py"]
