"""The fake Ollama's chat model: a deterministic answer for each kind of prompt memgui sends.

- A memory-extraction prompt (auto-ingest, Wunderland's system prompt) gets a JSON array of
  facts found in the user's message by keyword rules, one per sentence that has a rule's word:
  "prefer", "like", "love", "hate" → `user_preference` 0.8; "want to", "plan to", "goal" →
  `goal` 0.7; "actually", "correction" → `correction` 0.6; "I am", "I'm", "I work" →
  `knowledge` 0.5; "yesterday", "today", "went" → `episodic` 0.3. Entities are the
  capitalised words after a sentence's first.
- A derive prompt (consolidation) gets "Insight: these memories are about W1, W2 and W3",
  its three most frequent words of four letters or more.
- Anything else gets "ok".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

RULES = (
    (("prefer", "like", "love", "hate"), "user_preference", 0.8),
    (("want to", "plan to", "goal"), "goal", 0.7),
    (("actually", "correction"), "correction", 0.6),
    (("i am", "i'm", "i work"), "knowledge", 0.5),
    (("yesterday", "today", "went"), "episodic", 0.3),
)


def answer(messages: list[dict[str, Any]]) -> str:
    system = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    user = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    if "memory-extraction" in system:
        return json.dumps(extract(user))
    if "derive one concise higher-level insight" in user:
        return derive(user)
    return "ok"


def extract(prompt: str) -> list[dict[str, Any]]:
    said = prompt.split("\n\nAssistant:", 1)[0].removeprefix("User:").strip()
    facts = []
    for sentence in re.split(r"(?<=[.!?])\s+", said):
        lowered = sentence.lower()
        for words, category, importance in RULES:
            if any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words):
                names = re.findall(r"\b[A-Z][a-z]+\b", sentence)[1:]
                facts.append(
                    {
                        "content": sentence.strip(),
                        "category": category,
                        "importance": importance,
                        "entities": names,
                    }
                )
                break
    return facts


def derive(prompt: str) -> str:
    body = prompt.split(":", 1)[1] if ":" in prompt else prompt
    words = Counter(w for w in re.findall(r"[a-z]{4,}", body.lower()))
    top = [w for w, _ in sorted(words.items(), key=lambda item: (-item[1], item[0]))[:3]]
    return "Insight: these memories are about " + ", ".join(top)
