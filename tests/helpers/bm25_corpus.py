"""Real-text corpora for the BM25 tests.

``locomo_turns()`` reads the LoCoMo development conversations at test time
(``/work/shared/data/locomo/locomo-dev.json``, or ``$CHITTA_LOCOMO``); it is
never copied into the repository. ``english_corpus()`` builds documents from
sentences written for these tests, so the suite also runs where LoCoMo is absent.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

LOCOMO = Path(os.environ.get("CHITTA_LOCOMO", "/work/shared/data/locomo/locomo-dev.json"))

SENTENCES = [
    "I went hiking with my dog on Saturday and we found a quiet lake.",
    "The deploy failed because port 8080 was already in use on the staging server.",
    "She painted a sunrise over the mountains for her art class last spring.",
    "We should rename the snake_case helper before the v2 release.",
    "My sister adopted two cats from the shelter near the old library.",
    "The database migration took four hours and blocked every write.",
    "He is training for a marathon and runs ten miles every morning.",
    "Our team moved the meeting to Thursday because of the holiday.",
    "The recipe needs fresh basil, garlic, olive oil and a pinch of salt.",
    "Caroline gave a talk about counseling and mental health at the school.",
    "The cache was invalidated whenever the config file changed on disk.",
    "They camped in the forest and told stories around the fire all night.",
    "I bought a new guitar and started learning jazz chords.",
    "The flight to Lisbon was delayed by three hours due to fog.",
    "Remember to rotate the API keys before the audit next month.",
    "Melanie took her kids to the museum to see the dinosaur bones.",
    "The garden tomatoes finally turned red after weeks of rain.",
    "We fixed the memory leak by closing the file handles in the worker.",
    "He wrote a poem about the ocean and read it at the open mic night.",
    "The support group meets every Tuesday evening at the community center.",
    "Grandma's apple pie recipe uses cinnamon and a buttery crust.",
    "The server logs showed a spike in latency after the upgrade.",
    "I am reading a novel about a detective in Victorian London.",
    "Our neighbors threw a party to celebrate their anniversary.",
    "Café owners in Zürich complained about the new tax on coffee.",
    "The index rebuild finished overnight and queries are fast again.",
    "She volunteers at the animal shelter on weekends and loves it.",
    "We watched the meteor shower from the roof of the apartment.",
    "The benchmark compares query latency against SQLite and another library.",
    "Running every day helped him sleep better and feel calmer.",
]


def english_corpus(n_docs: int, seed: int = 0) -> list[str]:
    """``n_docs`` documents of 1-4 sentences drawn from ``SENTENCES``."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(SENTENCES, rng.randint(1, 4))) for _ in range(n_docs)]


def english_queries(n: int, seed: int = 1) -> list[str]:
    """Queries of 1-4 words sampled from the corpus vocabulary."""
    rng = random.Random(seed)
    words = sorted({w.strip(".,'") for s in SENTENCES for w in s.split()})
    return [" ".join(rng.sample(words, rng.randint(1, 4))) for _ in range(n)]


def locomo_turns(limit: int | None = None) -> tuple[list[str], list[str]] | None:
    """(turn texts as "Speaker: text", questions) or None when the file is missing."""
    if not LOCOMO.exists():
        return None
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    texts: list[str] = []
    questions: list[str] = []
    for sample in data:
        conv = sample["conversation"]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                texts.extend(f"{t['speaker']}: {t['text']}" for t in turns)
        questions.extend(str(q["question"]) for q in sample["qa"])
    if limit is not None:
        texts = texts[:limit]
    return texts, questions


def reference_scores(
    doc_tokens: dict[int, list[str]], query_tokens: list[str], k1: float, b: float
) -> dict[int, float]:
    """Straight BM25 (Lucene idf) over tokenized documents; only positive scores."""
    import math

    n = len(doc_tokens)
    if n == 0:
        return {}
    avgdl = sum(len(t) for t in doc_tokens.values()) / n
    df: Counter[str] = Counter()
    for toks in doc_tokens.values():
        df.update(set(toks))
    out: dict[int, float] = {}
    for doc_id, toks in doc_tokens.items():
        tf = Counter(toks)
        s = 0.0
        for q in query_tokens:  # repeated query terms count each time
            if tf[q] == 0:
                continue
            idf = math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5))
            s += idf * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(toks) / avgdl))
        if s > 0:
            out[doc_id] = s
    return out
