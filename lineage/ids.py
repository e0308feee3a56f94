"""Node ids: the one home that renders and parses the ids lineage answers key data, programs
and program runs by, in the *Metadata and Data Discovery* design's dotted shape (CDAP's):
``dataset.default.purchases``, ``mapreduce.default.PurchaseHistory.PurchaseHistoryBuilder``,
``default.PurchaseHistory.mapreduce.PurchaseHistoryBuilder.run-1``.

An id is its parts joined by ``.``. In every part but the last, ``\\`` is written ``\\\\`` and
``.`` is written ``\\.``; the last part is the rest of the id, kept as it is. So
``parse(render(parts)) == parts`` and no two distinct entities share an id: application ``a.b``
with program ``c`` is ``openlineage.default.a\\.b.c``, application ``a`` with program ``b.c`` is
``openlineage.default.a.b.c``. Namespaces and program types never hold ``.`` or ``\\`` (the event
format's rules), so a data id reads as it always did, and so does a program id whose application
holds neither (a program run id: whose application and program hold neither).

The warehouse stores each program's and dataset's id when it writes the row
(``warehouse.db.entity_keys``), and dbt reads the stored ids instead of joining parts again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lineage.errors import InvalidEntityError

SEPARATOR = "."
ESCAPE = "\\"
DATA_TYPES = ("dataset", "stream")  # the first part of a data id; no program may have one as its type


def render(parts: Sequence[str]) -> str:
    """The id of ``parts``: joined by ``.``, every part but the last escaped."""
    if not parts:
        raise InvalidEntityError("an id has at least one part")
    return prefix(parts[:-1]) + parts[-1]


def prefix(parts: Sequence[str]) -> str:
    """The start of any id whose first parts are ``parts``, up to and including the ``.`` before
    the next part: ``render([*parts, last]) == prefix(parts) + last`` for every ``last`` (what
    the warehouse stores so that SQL completes a program run id with the run id alone)."""
    return "".join(_escaped(part) + SEPARATOR for part in parts)


def parse(text: str, count: int) -> tuple[str, ...]:
    """The ``count`` parts of the id ``text``, the inverse of ``render``; InvalidEntityError when
    ``text`` has fewer parts or an escape other than ``\\\\`` or ``\\.`` before its last part."""
    if count < 1:
        raise InvalidEntityError(f"an id has at least one part, not {count}")
    parts: list[str] = []
    current: list[str] = []
    position = 0
    while len(parts) < count - 1:
        if position >= len(text):
            raise InvalidEntityError(f"{text[:200]!r} is not an id of {count} parts")
        char = text[position]
        if char == ESCAPE:
            escaped = text[position + 1:position + 2]
            if escaped not in (ESCAPE, SEPARATOR):
                raise InvalidEntityError(f"{text[:200]!r}: a '\\' escapes only '\\' or '.' (at {position})")
            current.append(escaped)
            position += 2
        elif char == SEPARATOR:
            parts.append("".join(current))
            current = []
            position += 1
        else:
            current.append(char)
            position += 1
    return (*parts, text[position:])


def _escaped(part: str) -> str:
    return part.replace(ESCAPE, ESCAPE * 2).replace(SEPARATOR, ESCAPE + SEPARATOR)


@dataclass(frozen=True)
class DataRef:
    """A dataset or stream, by its id ``type.namespace.name``."""

    namespace: str
    type: str  # dataset | stream
    name: str

    @property
    def id(self) -> str:
        return render((self.type, self.namespace, self.name))

    @classmethod
    def parse(cls, text: str) -> DataRef:
        data_type, namespace, name = parse(text, 3)
        return cls(namespace, data_type, name)


@dataclass(frozen=True)
class ProgramRef:
    """A program, by its id ``type.namespace.application.name``."""

    namespace: str
    application: str
    type: str
    name: str

    @property
    def id(self) -> str:
        return render((self.type, self.namespace, self.application, self.name))

    @classmethod
    def parse(cls, text: str) -> ProgramRef:
        program_type, namespace, application, name = parse(text, 4)
        return cls(namespace, application, program_type, name)

    @property
    def run_id_prefix(self) -> str:
        """The start of each of its program run ids: ``run_id(r) == run_id_prefix + r``."""
        return prefix((self.namespace, self.application, self.type, self.name))

    def run_id(self, run: str) -> str:
        """The id of its run ``run``: ``namespace.application.type.name.run``."""
        return self.run_id_prefix + run

    @classmethod
    def parse_run_id(cls, text: str) -> tuple[ProgramRef, str]:
        """The program and the run of a program run id, the inverse of ``run_id``."""
        namespace, application, program_type, name, run = parse(text, 5)
        return cls(namespace, application, program_type, name), run
