"""A bounded memo for the pure checks and derivations a worker repeats (a task's START, RUNNING
and COMPLETE carry the same datasets, hourly runs the same again): bounded by entries and by
bytes, so that a few huge values (a schema of 9,000 columns is 1 MB of JSON) cannot hold
gigabytes, and cleared whole when full, which is safe from any thread (a clear loses entries,
never gives a wrong answer)."""

from __future__ import annotations

from typing import Any


class BoundedMemo:
    """Values by key, at most ``entries`` of them and ``max_bytes`` of keys and values together
    (each ``put`` says its size); a value over ``item_bytes`` is not kept."""

    def __init__(self, entries: int, max_bytes: int, item_bytes: int | None = None) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.item_bytes = max_bytes if item_bytes is None else item_bytes
        self._values: dict[Any, Any] = {}
        self._bytes = 0

    def get(self, key: Any) -> Any:
        """The value kept under ``key``, else None."""
        return self._values.get(key)

    def __contains__(self, key: Any) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def put(self, key: Any, value: Any, size: int) -> None:
        """Keep ``value`` under ``key`` (``size``: the bytes it holds with its key)."""
        if size > self.item_bytes:
            return
        if len(self._values) >= self.entries or self._bytes + size > self.max_bytes:
            self._values.clear()
            self._bytes = 0
        self._values[key] = value
        self._bytes += size

    def held_bytes(self) -> int:
        """What the memo holds now, in bytes (as its puts said)."""
        return self._bytes
