"""The real services that tests and benchmarks start: a PostgreSQL cluster and an Airflow
api-server, each on a free loopback port. Not shipped in the wheel (on PYTHONPATH like tests/)."""
