"""The vocabulary: events, field operations and paths, metadata entities and values, schemas."""
