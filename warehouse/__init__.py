"""The PostgreSQL warehouse: migrations, connections, the compaction merge."""
