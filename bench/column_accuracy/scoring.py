"""Expected against captured, case by case, and the table (pure).

For every written column of every output, a source is a (dataset, field) pair and a kind a
(type, subtype, masking) triple. Per shape and in total:

- **sources**: precision and recall of the (column, source) pairs, whatever the kinds;
- **kinds**: precision and recall of the (column, source, kind) triples: a source found with a
  wrong kind counts once as a false positive and once as a false negative;
- **kind agreement**: of the sources both sides list for a column, the share whose kinds agree
  exactly (every kind expected, none more);
- **exact**: the cases whose every triple agrees and whose written columns are the expected ones
  (a column expected to read nothing, a literal, counts through that).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bench.column_accuracy.case import Expected

Columns = Mapping[str, Mapping[str, set[Expected]]]  # output -> column -> sources with their kinds


@dataclass
class Score:
    cases: int = 0
    exact: int = 0
    expected_sources: int = 0
    found_sources: int = 0
    right_sources: int = 0
    expected_kinds: int = 0
    found_kinds: int = 0
    right_kinds: int = 0
    shared_sources: int = 0
    agreeing_sources: int = 0

    def add(self, other: Score) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @staticmethod
    def ratio(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}%" if whole else "-"

    def row(self) -> list[str]:
        return [str(self.cases), f"{self.exact}/{self.cases}",
                self.ratio(self.right_sources, self.found_sources),
                self.ratio(self.right_sources, self.expected_sources),
                self.ratio(self.right_kinds, self.found_kinds), self.ratio(self.right_kinds, self.expected_kinds),
                self.ratio(self.agreeing_sources, self.shared_sources)]


HEADER = ["cases", "exact", "source precision", "source recall", "kind precision", "kind recall", "kind agreement"]


@dataclass
class Outcome:
    """One case's score and what differs: ``missing`` and ``extra`` as (output, column, source)."""

    name: str
    shape: str
    score: Score
    missing: list[tuple[str, str, Expected]] = field(default_factory=list)
    extra: list[tuple[str, str, Expected]] = field(default_factory=list)
    error: str = ""
    columns_missing: list[tuple[str, str]] = field(default_factory=list)  # (output, column) not captured
    columns_extra: list[tuple[str, str]] = field(default_factory=list)  # captured, not expected

    @property
    def right(self) -> bool:
        return not (self.missing or self.extra or self.error or self.columns_missing or self.columns_extra)


def score_case(name: str, shape: str, expected: Columns, found: Columns, error: str = "") -> Outcome:
    """Compare a case's expected columns with the captured ones. Every column either side lists
    counts: a written column the case does not expect brings only false positives, an expected
    output or column not captured only false negatives."""
    triples_expected = _triples(expected)
    triples_found = _triples(found)
    sources_expected = {triple[:4] for triple in triples_expected}
    sources_found = {triple[:4] for triple in triples_found}
    shared = sources_expected & sources_found

    def kinds(triples: set[tuple[str, str, str, str, str, str, bool]], source: tuple[str, str, str, str]
              ) -> set[tuple[str, str, bool]]:
        return {triple[4:] for triple in triples if triple[:4] == source}

    score = Score(cases=1, expected_sources=len(sources_expected), found_sources=len(sources_found),
                  right_sources=len(shared), expected_kinds=len(triples_expected), found_kinds=len(triples_found),
                  right_kinds=len(triples_expected & triples_found), shared_sources=len(shared),
                  agreeing_sources=sum(kinds(triples_expected, s) == kinds(triples_found, s) for s in shared))
    columns_expected = {(output, column) for output, by_column in expected.items() for column in by_column}
    columns_found = {(output, column) for output, by_column in found.items() for column in by_column}
    outcome = Outcome(name, shape, score, error=error,
                      missing=[_item(t) for t in sorted(triples_expected - triples_found)],
                      extra=[_item(t) for t in sorted(triples_found - triples_expected)],
                      columns_missing=sorted(columns_expected - columns_found),
                      columns_extra=sorted(columns_found - columns_expected))
    score.exact = int(outcome.right)
    return outcome


def _triples(columns: Columns) -> set[tuple[str, str, str, str, str, str, bool]]:
    return {(output, column, source.dataset, source.field, source.type, source.subtype, source.masking)
            for output, by_column in columns.items() for column, sources in by_column.items() for source in sources}


def _item(triple: tuple[str, str, str, str, str, str, bool]) -> tuple[str, str, Expected]:
    output, column, *source = triple
    return output, column, Expected(*source)  # type: ignore[arg-type]


def by_shape(outcomes: Iterable[Outcome]) -> dict[str, Score]:
    """Each shape's summed score, then ``total``."""
    shapes: dict[str, Score] = {}
    total = Score()
    for outcome in outcomes:
        shapes.setdefault(outcome.shape, Score()).add(outcome.score)
        total.add(outcome.score)
    return {**dict(sorted(shapes.items())), "total": total}


def table(outcomes: Iterable[Outcome], markdown: bool = False) -> str:
    """The table by shape, plain or as Markdown."""
    rows = [[shape, *score.row()] for shape, score in by_shape(outcomes).items()]
    header = ["shape", *HEADER]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
    widths = [max(len(row[index]) for row in [header, *rows]) for index in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) if index == 0 else cell.rjust(width)
                               for index, (cell, width) in enumerate(zip(row, widths, strict=True)))
                     for row in [header, *rows])


def differences(outcome: Outcome) -> list[str]:
    """What a case got wrong, one line each."""
    if outcome.error:
        return [f"failed: {outcome.error}"]
    return ([f"column {output}.{column} not written" for output, column in outcome.columns_missing]
            + [f"column {output}.{column} written, not expected" for output, column in outcome.columns_extra]
            + [f"missing {output}.{column} <- {source.render()}" for output, column, source in outcome.missing]
            + [f"extra   {output}.{column} <- {source.render()}" for output, column, source in outcome.extra])
