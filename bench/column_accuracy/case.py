"""A labelled case: a Spark job writing one or more outputs, and for each written column the
source fields it comes from and how, written by hand before the case was first run.

The notation of an expected column: comma-separated ``dataset.field SUBTYPE`` items, the type
following from the subtype (IDENTITY, TRANSFORMATION, AGGREGATION are DIRECT; JOIN, FILTER,
GROUP_BY, SORT, WINDOW, CONDITIONAL are INDIRECT), ``masked`` after it when the transformation
hides the value; a nested field keeps its path (``people.address.city IDENTITY``). An empty
string: the column reads nothing (a literal). ``people.age FILTER`` on a column says rows of
the output were chosen by ``age``: the OpenLineage specification's dataset-wide INDIRECT inputs
are listed on every column they apply to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

DIRECT_SUBTYPES = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
INDIRECT_SUBTYPES = ("JOIN", "FILTER", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL")
SHAPES = ("projection", "conditional", "join", "aggregate", "window", "union", "subquery", "cte",
          "generator", "nested", "distinct", "multi-output", "table", "view", "filter", "sort")


class Expected(NamedTuple):
    """A source field of a written column and how it reaches it."""

    dataset: str  # the last part of the source dataset's name (``people``)
    field: str
    type: str
    subtype: str
    masking: bool = False

    def render(self) -> str:
        return f"{self.dataset}.{self.field} {self.subtype}{' masked' if self.masking else ''}"


Outputs = Callable[[str], str]
"""A case's outputs by name: ``out("totals")`` is the path (or table name) it writes to."""


@dataclass(frozen=True)
class Case:
    name: str
    shape: str
    form: str  # "sql" or "dataframe"
    job: Callable[..., None]  # job(spark, out): writes the outputs
    expected: Mapping[str, Mapping[str, str]]  # output -> column -> notation
    wrong: str = ""  # why the product gets it wrong, while it does (the case stays in the set)
    tables: tuple[str, ...] = field(default=())  # outputs written as catalog tables, created by the job

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"case {self.name}: shape {self.shape!r} is not one of {SHAPES}")
        if self.form not in ("sql", "dataframe"):
            raise ValueError(f"case {self.name}: form {self.form!r} is neither sql nor dataframe")
        for output, columns in self.expected.items():
            for column, notation in columns.items():
                parse(notation, where=f"{self.name}/{output}/{column}")

    def expectations(self) -> dict[str, dict[str, set[Expected]]]:
        return {output: {column: parse(notation) for column, notation in columns.items()}
                for output, columns in self.expected.items()}


def parse(notation: str, where: str = "") -> set[Expected]:
    """The expected sources a notation lists (see the module's docstring)."""
    found: set[Expected] = set()
    for item in filter(None, (part.strip() for part in notation.split(","))):
        words = item.split()
        if len(words) not in (2, 3) or (len(words) == 3 and words[2] != "masked") or "." not in words[0]:
            raise ValueError(f"{where}: {item!r} is not 'dataset.field SUBTYPE [masked]'")
        dataset, column = words[0].split(".", 1)
        subtype = words[1]
        if subtype in DIRECT_SUBTYPES:
            kind = "DIRECT"
        elif subtype in INDIRECT_SUBTYPES:
            kind = "INDIRECT"
        else:
            raise ValueError(f"{where}: {subtype!r} is no OpenLineage subtype "
                             f"({', '.join(DIRECT_SUBTYPES + INDIRECT_SUBTYPES)})")
        found.add(Expected(dataset, column, kind, subtype, len(words) == 3))
    return found
