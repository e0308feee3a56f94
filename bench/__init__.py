"""Synthetic workloads and benchmarks (they print figures; nothing here asserts on time)."""
