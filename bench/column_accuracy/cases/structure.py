"""(cases to come)"""

from __future__ import annotations

from bench.column_accuracy.case import Case

CASES: list[Case] = []
