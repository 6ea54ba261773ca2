"""The curated layer (seed 001): a closed domain / topic / fact vocabulary that a
person can read in full, a five-stage write path with at most one model call,
catalog-then-recall, dispute pairing, pinned recall and the export tree.

State lives in the ``curated`` organ (chitta/organs/curated.py), written only as
CuratedEvent ops; its operations (chitta/organs/curated_ops.py) reach every door.
Modules: ``paths`` (typed topic paths, one renderer), ``facts`` (kinds, hash,
block), ``vocabulary`` (caps, budgets, catalog), ``admission`` (the pure
predicate), ``classifier`` (the optional model hook, audited), ``write_path``,
``read_path``, ``pins`` (pins and roles), ``export`` (the tree and its import).
"""

from __future__ import annotations

from chitta.curated.admission import Admission, Rules, admit
from chitta.curated.classifier import Candidate, Classifier, set_classifier
from chitta.curated.paths import TopicPath

__all__ = ["Admission", "Candidate", "Classifier", "Rules", "TopicPath", "admit", "set_classifier"]
