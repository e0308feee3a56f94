"""Pipeline stages that are not Spark: the quality gate, the dbt build, cleanup, the report."""
