"""Metadata search queries ("Search" of the *Metadata and Data Discovery* design): parsing and
matching, without a database.

A query is terms separated by spaces, OR'ed; ``+term`` is required. A term is
- ``pur`` or ``pur*``: a value prefix, over names, tags, property values and schema fields;
- ``key:value``: a property ``key`` whose value starts with ``value`` (``owner:`` alone: has the key);
- ``tags:PII``: a tag, assigned or propagated along field lineage (``propagated:false``: assigned
  only); ``field:emp*``: a field of the dataset's schema; ``op:sha2``, ``op:concat*``: the
  fields a transform step of that name made; ``transform:MASKED``, ``transform:AGGREGATION``:
  the fields made from a source field by a masking step, by an aggregation (any subtype).
Matching ignores case; quotes keep spaces in a term (``"gold tier"``, ``note:"a b"``). Every
other character (``'``, ``%``, ``_``, ``\\``, ``*`` inside a term) is matched literally.
Ranking: more matched terms first, then more exact matches (a whole value rather than a prefix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from lineage.errors import InvalidSearchError

MAX_TERMS = 10
MAX_TERM_LENGTH = 200  # the search index keeps the first 200 characters of each value
TAGS_KEY = "tags"
FIELD_KEY = "field"
PROPAGATED_KEY = "propagated"  # propagated:false: tags: terms match assigned tags only
OPERATION_KEY = "op"  # op:sha2: the fields a step of that name made
TRANSFORM_KEY = "transform"  # transform:MASKED, transform:AGGREGATION: the fields made so
_KINDS = {FIELD_KEY: ("field",), OPERATION_KEY: ("operation",), TRANSFORM_KEY: ("transform",)}

_TOKEN = re.compile(r'(\+?)(?:([^\s:"]+):)?(?:"([^"]*)"|(\S*))')


@dataclass(frozen=True)
class Term:
    """One query term: lower-cased ``text`` matched as a prefix of values (of ``key`` when given)."""

    text: str
    key: str | None = None
    required: bool = False
    propagated: bool = True  # a tags: term also matches tags propagated along field lineage

    @property
    def kinds(self) -> tuple[str, ...] | None:
        """The index row kinds the term is restricted to (None: any value)."""
        if self.key is None:
            return None
        if self.key == TAGS_KEY:
            return ("tag", "propagated_tag") if self.propagated else ("tag",)
        return _KINDS.get(self.key, ("property",))

    @property
    def like_pattern(self) -> str:
        """A LIKE pattern (escape character ``\\``) matching values that start with the text."""
        return like_escape(self.text) + "%"

    def matches(self, kind: str, key_term: str, term: str) -> bool:
        """Whether an index row (kind, lower-cased key, lower-cased value) matches this term."""
        kinds = self.kinds
        if kinds is not None and (kind not in kinds or (kinds == ("property",) and key_term != self.key)):
            return False
        return term.startswith(self.text)

    def render(self) -> str:
        text = f'"{self.text}"' if " " in self.text else self.text
        return ("+" if self.required else "") + (f"{self.key}:" if self.key else "") + text


def like_escape(text: str) -> str:
    """``text`` with LIKE's metacharacters escaped, to match literally (escape character ``\\``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def parse_query(query: str) -> list[Term]:
    """The terms of ``query``; raises InvalidSearchError for an empty or oversized query."""
    terms: list[Term] = []
    position = 0
    text = query.strip()
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        match = _TOKEN.match(text, position)
        assert match is not None  # the pattern matches the empty string
        required, key, quoted, bare = match.groups()
        value = quoted if quoted is not None else bare
        if value.endswith("*") and quoted is None:
            value = value[:-1]
        position = max(match.end(), position + 1)
        if not value and key is None:
            continue
        if len(value) > MAX_TERM_LENGTH:
            raise InvalidSearchError(
                f"a search term has at most {MAX_TERM_LENGTH} characters; {value[:40]!r}... has {len(value)}")
        terms.append(Term(value.lower(), key.lower() if key else None, bool(required)))
    flags = [term for term in terms if term.key == PROPAGATED_KEY]
    terms = [term for term in terms if term.key != PROPAGATED_KEY]
    if any(flag.text not in ("true", "false") for flag in flags):
        raise InvalidSearchError("propagated: takes true (the default: tags: terms match propagated tags too) or false")
    if any(flag.text == "false" for flag in flags):
        terms = [replace(term, propagated=False) for term in terms]
    if not terms:
        raise InvalidSearchError("the query is empty: give a value prefix (pur*), key:value, tags:NAME or field:NAME")
    if len(terms) > MAX_TERMS:
        raise InvalidSearchError(f"a query has at most {MAX_TERMS} terms, got {len(terms)}")
    return terms
