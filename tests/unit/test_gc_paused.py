"""The collector pause around a capture and a wide answer leaves the collector as it found it."""

from __future__ import annotations

import gc

import pytest

from lineage.gc_paused import paused_collection


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_in_the_block_and_left_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with paused_collection():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), paused_collection():
            raise RuntimeError("the block failed")
        assert gc.isenabled() is enabled  # restored when the block raises too
    finally:
        (gc.enable if was else gc.disable)()
