"""Small deterministic input data for the example pipelines."""

from __future__ import annotations

import random
from pathlib import Path

FIRST_NAMES = ("John", "Ana", "Wei", "Fatima", "Lars", "Priya", "Kofi", "Mei")
LAST_NAMES = ("Smith", "Garcia", "Chen", "Khan", "Berg", "Patel", "Mensah", "Wong")
CITIES = (("Santa Clara", "CA"), ("Austin", "TX"), ("Boston", "MA"), ("Seattle", "WA"))
PRODUCTS = ("apple", "banana", "coffee", "tea", "bread")


def write_user_data(folder: Path, rows: int, seed: int) -> Path:
    """The *Field Level Lineage* design's file: one CSV body per line (``John,Smith,31,Santa Clara,CA``)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"users-{seed}.txt"
    lines = []
    for _ in range(rows):
        city, state = rng.choice(CITIES)
        lines.append(f"{rng.choice(FIRST_NAMES)},{rng.choice(LAST_NAMES)},{rng.randint(18, 90)},{city},{state}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_purchase_events(folder: Path, rows: int, seed: int) -> Path:
    """The *Metadata and Data Discovery* design's purchaseStream: ``customer bought N product for $P`` lines."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"purchases-{seed}.txt"
    customers = [f"{first.lower()}" for first in FIRST_NAMES]
    lines = [
        f"{rng.choice(customers)} bought {rng.randint(1, 5)} {rng.choice(PRODUCTS)} for ${rng.randint(1, 30)}"
        for _ in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
