"""Ingest keys: static secrets OpenLineage producers send as ``Authorization: Bearer <key>``
(the stock HTTP transport's ``api_key`` auth), since Airflow's tokens expire.

A key is ``lwk_`` and 43 random URL-safe characters (256 bits). Only its SHA-256 is stored (a
key is random, so a slow password hash adds nothing); the key itself is shown once, when it is
created. Each key is bound to a principal, whose grants decide what the key may write.
"""

from __future__ import annotations

import hashlib
import secrets

from lineage.errors import InvalidRequestError

PREFIX = "lwk_"
SHOWN = 12  # characters of a key kept in clear to tell keys apart in a listing
MAX_NAME_LENGTH = 200


def new_key() -> str:
    """A fresh ingest key."""
    return PREFIX + secrets.token_urlsafe(32)


def is_ingest_key(token: str) -> bool:
    """Whether a bearer token is an ingest key (not an Airflow JWT)."""
    return token.startswith(PREFIX)


def key_hash(key: str) -> str:
    """What the warehouse stores and looks a key up by."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def shown_part(key: str) -> str:
    """The beginning of a key, stored in clear so a listing tells keys apart (``lwk_AbCdEfGh``)."""
    return key[:SHOWN]


def check_name(name: str) -> str:
    """A key's name: what it is for (``airflow-prod``), 1-200 printable characters."""
    if not name.strip() or len(name) > MAX_NAME_LENGTH or not name.isprintable():
        raise InvalidRequestError(f"an ingest key's name is 1-{MAX_NAME_LENGTH} printable characters")
    return name
