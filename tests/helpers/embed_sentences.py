"""Real sentences for the embedder tests (written for chitta; no external data)."""

from __future__ import annotations

# (text, paraphrase in mostly other words, unrelated sentence)
PARAPHRASE_TRIPLES: list[tuple[str, str, str]] = [
    (
        "The cat is sleeping on the sofa.",
        "A kitten naps on the couch.",
        "Interest rates rose again this quarter.",
    ),
    (
        "How do I reset my password?",
        "I forgot my login credentials and need new ones.",
        "The river flooded the village last spring.",
    ),
    (
        "The meeting was moved to Thursday afternoon.",
        "We rescheduled the call for later in the week, on Thursday.",
        "She planted tomatoes in the garden.",
    ),
    (
        "The build failed because a header file was missing.",
        "Compilation broke since an include could not be found.",
        "My grandmother bakes bread every Sunday.",
    ),
    (
        "He bought a new car yesterday.",
        "Yesterday he purchased a brand-new automobile.",
        "The telescope revealed distant galaxies.",
    ),
    (
        "The restaurant was too noisy to talk.",
        "It was so loud in the diner that we could not chat.",
        "Python lists are mutable sequences.",
    ),
    (
        "The stock market dropped sharply today.",
        "Share prices fell steeply this afternoon.",
        "The children built a sandcastle at the beach.",
    ),
    (
        "Please turn off the lights when you leave.",
        "Switch the lamps off on your way out, please.",
        "The database index speeds up lookups.",
    ),
    (
        "The patient was given antibiotics for the infection.",
        "Doctors prescribed medicine to treat the bacterial illness.",
        "The orchestra played a symphony by Brahms.",
    ),
    (
        "It is going to rain tomorrow.",
        "Tomorrow the forecast says there will be showers.",
        "The server returned a 404 error.",
    ),
    (
        "The user prefers dark mode in the editor.",
        "She likes a dark colour theme when writing code.",
        "Mount Everest is the highest mountain on Earth.",
    ),
    (
        "The train to Paris was delayed by an hour.",
        "Our rail journey to the French capital ran sixty minutes late.",
        "He repaired the leaking kitchen tap.",
    ),
]

SENTENCES: list[str] = [s for triple in PARAPHRASE_TRIPLES for s in triple] + [
    "Memory consolidation happens during deep sleep.",
    "The agent stores each observation in a write-ahead log.",
    "Vector search returns the nearest neighbours of a query.",
    "A write-ahead log makes crashes recoverable.",
    "Tokyo is the capital of Japan.",
    "The quick brown fox jumps over the lazy dog.",
    "Unit tests should fail for exactly one reason.",
    "Coffee prices have doubled since last year.",
    "The museum opens at nine in the morning.",
    "Use ninja to build the project faster.",
    "Die Katze schläft auf dem Sofa.",
    "Le chat dort sur le canapé.",
    "Café au lait, naïve résumé — Unicode text.",
    "",
    "ok",
]
