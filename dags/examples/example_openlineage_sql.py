"""
### example_openlineage_sql (an example)

An example of Airflow's own lineage reaching the warehouse: three SQL tasks on the warehouse's
PostgreSQL (connection `lineage_warehouse`, tables in the schema `example_shop` only), run by
`SQLExecuteQueryOperator`, whose SQL Airflow's OpenLineage provider parses. With
`LINEAGE_AIRFLOW_OPENLINEAGE=true` each task run sends its START and COMPLETE events, with the
tables it read and wrote, their schemas and column lineage, through the in-process transport
into the raw log, and the next compaction makes them runs of the programs
`example_openlineage_sql.<task>` (type `openlineage`, application `airflow`).

1. **seed_shop**: (re)creates `customers` and `orders` with a few rows.
2. **build_customer_totals**: `CREATE TABLE ... AS SELECT` joining and aggregating them:
   `customer_totals.total_spent` comes from `orders.amount`, `customer` from `customers.name`.
3. **load_big_spenders**: `INSERT INTO big_spenders ... SELECT` from `customer_totals`.

Not scheduled (trigger it, or `airflow dags test example_openlineage_sql`); every run gives the
same tables. `make demo` runs it. Leave it out of a production DAG folder (`.airflowignore`).
"""

from __future__ import annotations

import pendulum
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.sdk import dag

CONNECTION = "lineage_warehouse"

SEED_SHOP = [
    "create schema if not exists example_shop",
    "drop table if exists example_shop.orders",
    "drop table if exists example_shop.customers",
    "create table example_shop.customers (customer_id integer primary key, name text not null, country text)",
    "create table example_shop.orders (order_id integer primary key, customer_id integer not null, "
    "amount numeric(10, 2) not null, ordered_at timestamptz not null)",
    "insert into example_shop.customers (customer_id, name, country) values "
    "(1, 'Ada', 'UK'), (2, 'Grace', 'US'), (3, 'Linus', 'FI')",
    "insert into example_shop.orders (order_id, customer_id, amount, ordered_at) values "
    "(10, 1, 120.00, '2026-11-01T10:00:00Z'), (11, 1, 30.50, '2026-11-02T11:00:00Z'), "
    "(12, 2, 80.00, '2026-11-02T12:00:00Z'), (13, 3, 250.00, '2026-11-03T09:30:00Z')",
]

BUILD_CUSTOMER_TOTALS = [
    "drop table if exists example_shop.customer_totals",
    """create table example_shop.customer_totals as
       select c.name as customer, c.country, sum(o.amount) as total_spent, count(o.order_id) as order_count
       from example_shop.orders o
       join example_shop.customers c on c.customer_id = o.customer_id
       group by c.name, c.country""",
]

LOAD_BIG_SPENDERS = [
    "create table if not exists example_shop.big_spenders (customer text primary key, total_spent numeric(12, 2))",
    "delete from example_shop.big_spenders",
    """insert into example_shop.big_spenders (customer, total_spent)
       select customer, total_spent from example_shop.customer_totals where total_spent > 100""",
]


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["example", "openlineage"],
    doc_md=__doc__,
)
def example_openlineage_sql() -> None:
    seed_shop = SQLExecuteQueryOperator(task_id="seed_shop", conn_id=CONNECTION, sql=SEED_SHOP)
    build_customer_totals = SQLExecuteQueryOperator(task_id="build_customer_totals", conn_id=CONNECTION,
                                                    sql=BUILD_CUSTOMER_TOTALS)
    load_big_spenders = SQLExecuteQueryOperator(task_id="load_big_spenders", conn_id=CONNECTION,
                                                sql=LOAD_BIG_SPENDERS)
    seed_shop >> build_customer_totals >> load_big_spenders


example_openlineage_sql()
