"""The LoCoMo paper's retrieval figures, for comparison with eval_locomo.py.

Source: Maharana et al., "Evaluating Very Long-Term Conversational Memory of
LLM Agents", ACL 2024 (aclanthology.org/2024.acl-long.747), Table 3: recall
accuracy R@k of the DRAGON retriever with dialogue turns as the retrieval
unit, on all 10 conversations (our dev split holds 5 of them). The overall
column equals the figures quoted in ../shared/data/locomo/README.md.

The arXiv v1 preprint (2402.17753v1) printed another version of this table
(for example R@10 overall 0.675, temporal 0.973), computed before the data
was released; these are the published ACL numbers.

Category numbers follow the released data (1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial); "overall" includes category 5.
"""

from __future__ import annotations

# k -> category (or "overall") -> R@k
DRAGON_TURNS: dict[int, dict[int | str, float]] = {
    5: {4: 0.680, 1: 0.354, 2: 0.704, 3: 0.331, 5: 0.439, "overall": 0.567},
    10: {4: 0.777, 1: 0.466, 2: 0.773, 3: 0.408, 5: 0.547, "overall": 0.662},
    25: {4: 0.871, 1: 0.625, 2: 0.835, 3: 0.526, 5: 0.663, "overall": 0.767},
    50: {4: 0.911, 1: 0.730, 2: 0.896, 3: 0.617, 5: 0.725, "overall": 0.827},
}
