"""OpenLineage in: the envelope's checks, facets kept, and what an event becomes (pure)."""
