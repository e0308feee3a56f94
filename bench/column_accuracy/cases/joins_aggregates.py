"""Joins, aggregates, windows, distinct and sorts, in SQL and DataFrame forms.

A dataset-wide INDIRECT input (a join key, a filter, a grouping key, a sort key) carries the
subtype of the operation that reads that source column, on every written column it applies to;
a condition on a derived column (``rn = 1``, ``having max(quantity) > 1``) reaches the columns
the derived value is computed from, with the condition's subtype.
"""

from __future__ import annotations

from pyspark.sql import SparkSession, Window
from pyspark.sql import functions as F

from bench.column_accuracy.case import Case, Outputs

# joins


def _inner_join(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select o.id, p.first, o.amount from orders o join people p on o.person = p.id").write.parquet(out("out"))


def _left_join(spark: SparkSession, out: Outputs) -> None:
    orders, returns = spark.table("orders"), spark.table("returns")
    (orders.join(returns, orders["id"] == returns["order_id"], "left")
     .select(orders["id"], orders["amount"], returns["reason"])
     .write.parquet(out("out")))


def _full_outer_join(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select coalesce(o.id, r.order_id) as order_id, o.amount, r.refunded "
              "from orders o full outer join returns r on o.id = r.order_id").write.parquet(out("out"))


def _self_join(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select a.id as earlier, b.id as later from orders a join orders b "
              "on a.person = b.person and a.placed < b.placed").write.parquet(out("out"))


def _join_on_two_keys(spark: SparkSession, out: Outputs) -> None:
    orders, returns = spark.table("orders"), spark.table("returns")
    (orders.join(returns, (orders["id"] == returns["order_id"]) & (orders["amount"] == returns["refunded"]))
     .select(orders["id"], returns["reason"])
     .write.parquet(out("out")))


def _join_of_filtered_frames(spark: SparkSession, out: Outputs) -> None:
    paid = spark.table("orders").filter("status = 'paid'")
    adults = spark.table("people").filter("age > 18")
    paid.join(adults, paid["person"] == adults["id"]).select(adults["first"], paid["amount"]).write.parquet(out("out"))


def _three_table_join(spark: SparkSession, out: Outputs) -> None:
    orders, people, products = spark.table("orders"), spark.table("people"), spark.table("products")
    (orders.join(people, orders["person"] == people["id"]).join(products, orders["product"] == products["id"])
     .select(people["last"], products["name"], orders["quantity"])
     .write.parquet(out("out")))


def _where_exists(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select p.id, p.first from people p where exists "
              "(select 1 from orders o where o.person = p.id and o.status = 'paid')").write.parquet(out("out"))


def _left_anti_join(spark: SparkSession, out: Outputs) -> None:
    orders, returns = spark.table("orders"), spark.table("returns")
    (orders.join(returns, orders["id"] == returns["order_id"], "left_anti").select("id", "amount")
     .write.parquet(out("out")))


def _join_using(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, p.first, o.amount from people p "
              "join (select person as id, amount from orders) o using (id)").write.parquet(out("out"))


def _cross_join_where(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select p.first, pr.name from people p cross join products pr "
              "where p.age > pr.price").write.parquet(out("out"))


# aggregates


def _sum_avg_min_max(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select person, sum(amount) as total, avg(amount) as mean, min(placed) as first_placed, "
              "max(quantity) as most from orders group by person").write.parquet(out("out"))


def _count_star_and_column(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").groupBy("status").agg(F.count("*").alias("n"), F.count("tags").alias("tagged"))
     .write.parquet(out("out")))


def _count_distinct(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select state, count(distinct last) as surnames from people group by state").write.parquet(out("out"))


def _having(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select person, sum(amount) as total from orders group by person "
              "having max(quantity) > 1").write.parquet(out("out"))


def _having_on_a_count(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select state, max(age) as oldest from people group by state "
              "having count(email) > 0").write.parquet(out("out"))


def _group_by_expression(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").groupBy(F.year("placed").alias("year")).agg(F.sum("quantity").alias("units"))
     .write.parquet(out("out")))


def _aggregate_over_join(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select p.state, sum(o.amount) as spent from orders o join people p on o.person = p.id "
              "group by p.state").write.parquet(out("out"))


def _aggregate_over_join_frames(spark: SparkSession, out: Outputs) -> None:
    products, orders = spark.table("products"), spark.table("orders")
    (products.join(orders, products["id"] == orders["product"]).groupBy(products["category"])
     .agg(F.countDistinct(orders["person"]).alias("buyers"))
     .write.parquet(out("out")))


def _rollup(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select state, last, count(*) as n from people group by rollup(state, last)").write.parquet(out("out"))


def _cube(spark: SparkSession, out: Outputs) -> None:
    spark.table("orders").cube("status", "product").agg(F.sum("amount").alias("total")).write.parquet(out("out"))


def _grouping_sets(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select status, person, grouping(status) as status_rolled_up, sum(quantity) as units from orders "
              "group by grouping sets ((status), (person))").write.parquet(out("out"))


def _collect_list_and_set(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").groupBy("person")
     .agg(F.collect_list("id").alias("order_ids"), F.collect_set("status").alias("statuses"))
     .write.parquet(out("out")))


def _aggregate_without_group_by(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select count(*) as n, sum(amount) as revenue, max(placed) as latest from orders")
     .write.parquet(out("out")))


def _first_last(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").groupBy("person")
     .agg(F.first("status").alias("first_status"), F.last("amount").alias("last_amount"))
     .write.parquet(out("out")))


# windows


def _ranking_functions(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, row_number() over (partition by person order by amount desc) as rn, "
              "rank() over (order by amount) as rk, dense_rank() over (partition by status order by placed) as dr "
              "from orders").write.parquet(out("out"))


def _sum_over_partition(spark: SparkSession, out: Outputs) -> None:
    window = Window.partitionBy("person").orderBy("placed")
    spark.table("orders").select("id", F.sum("amount").over(window).alias("running")).write.parquet(out("out"))


def _running_total_rows(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, placed, sum(quantity) over (order by placed, id rows between unbounded preceding "
              "and current row) as units_so_far from orders").write.parquet(out("out"))


def _lag_lead(spark: SparkSession, out: Outputs) -> None:
    window = Window.partitionBy("person").orderBy("placed")
    (spark.table("orders")
     .select("id", F.lag("amount").over(window).alias("previous"), F.lead("placed").over(window).alias("next_placed"))
     .write.parquet(out("out")))


def _first_row_per_group(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, person, amount from (select *, row_number() over (partition by person order by amount desc) "
              "as rn from orders) ranked where rn = 1").write.parquet(out("out"))


def _window_over_group_by(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select person, sum(amount) as total, rank() over (order by sum(amount) desc) as place "
              "from orders group by person").write.parquet(out("out"))


def _ntile_and_partition_average(spark: SparkSession, out: Outputs) -> None:
    by_amount, by_status = Window.orderBy("amount"), Window.partitionBy("status")
    (spark.table("orders")
     .select("id", F.ntile(2).over(by_amount).alias("half"), F.avg("amount").over(by_status).alias("status_mean"),
             (F.col("amount") - F.avg("amount").over(by_status)).alias("gap"))
     .write.parquet(out("out")))


def _filter_on_dense_rank(spark: SparkSession, out: Outputs) -> None:
    window = Window.partitionBy("product").orderBy(F.desc("quantity"))
    (spark.table("orders").withColumn("rk", F.dense_rank().over(window)).filter("rk <= 1")
     .select("product", "person", "rk")
     .write.parquet(out("out")))


# distinct


def _select_distinct(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select distinct state, last from people").write.parquet(out("out"))


def _distinct_of_expression(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").select(F.upper("state").alias("st")).distinct().write.parquet(out("out"))


def _drop_duplicates_keys(spark: SparkSession, out: Outputs) -> None:
    spark.table("orders").dropDuplicates(["person"]).select("id", "person", "amount").write.parquet(out("out"))


def _distinct_over_join(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select distinct p.state from people p join orders o on p.id = o.person").write.parquet(out("out"))


# sorts


def _order_by_expression(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, amount from orders order by amount * quantity desc, id").write.parquet(out("out"))


def _sort_within_partitions(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").repartition("person").sortWithinPartitions("placed").select("id", "placed")
     .write.parquet(out("out")))


def _sort_by_unwritten_length(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").orderBy(F.length("last"), "age").select("first").write.parquet(out("out"))


_ORDERS_PEOPLE = "orders.person JOIN, people.id JOIN"
_ORDERS_RETURNS = "orders.id JOIN, returns.order_id JOIN"

CASES = [
    Case("inner_join_keys_on_every_column", "join", "sql", _inner_join,
         {"out": {"id": f"orders.id IDENTITY, {_ORDERS_PEOPLE}",
                  "first": f"people.first IDENTITY, {_ORDERS_PEOPLE}",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_PEOPLE}"}}),
    Case("left_join_keeps_both_keys_as_join", "join", "dataframe", _left_join,
         {"out": {"id": f"orders.id IDENTITY, {_ORDERS_RETURNS}",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_RETURNS}",
                  "reason": f"returns.reason IDENTITY, {_ORDERS_RETURNS}"}}),
    Case("full_outer_join_coalesced_key", "join", "sql", _full_outer_join,
         {"out": {"order_id": "orders.id TRANSFORMATION, returns.order_id TRANSFORMATION, orders.id CONDITIONAL, "
                              f"{_ORDERS_RETURNS}",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_RETURNS}",
                  "refunded": f"returns.refunded IDENTITY, {_ORDERS_RETURNS}"}}),
    Case("self_join_with_aliases", "join", "sql", _self_join,
         {"out": {"earlier": "orders.id IDENTITY, orders.person JOIN, orders.placed JOIN",
                  "later": "orders.id IDENTITY, orders.person JOIN, orders.placed JOIN"}}),
    Case("join_on_two_keys", "join", "dataframe", _join_on_two_keys,
         {"out": {"id": f"orders.id IDENTITY, {_ORDERS_RETURNS}, orders.amount JOIN, returns.refunded JOIN",
                  "reason": f"returns.reason IDENTITY, {_ORDERS_RETURNS}, orders.amount JOIN, returns.refunded JOIN"}}),
    Case("join_of_filtered_frames_keeps_filters", "join", "dataframe", _join_of_filtered_frames,
         {"out": {"first": f"people.first IDENTITY, {_ORDERS_PEOPLE}, orders.status FILTER, people.age FILTER",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_PEOPLE}, orders.status FILTER, people.age FILTER"}}),
    Case("three_table_join_all_keys", "join", "dataframe", _three_table_join,
         {"out": {"last": f"people.last IDENTITY, {_ORDERS_PEOPLE}, orders.product JOIN, products.id JOIN",
                  "name": f"products.name IDENTITY, {_ORDERS_PEOPLE}, orders.product JOIN, products.id JOIN",
                  "quantity": f"orders.quantity IDENTITY, {_ORDERS_PEOPLE}, orders.product JOIN, products.id JOIN"}}),
    # a correlated EXISTS is a condition on the rows of the query as written (the analyzed plan);
    # Spark's optimizer runs it as a left semi join (docs/spark-capture.md: where the product differs)
    Case("where_exists_filters_on_its_correlation", "join", "sql", _where_exists,
         {"out": {"id": "people.id IDENTITY, people.id FILTER, orders.person FILTER, orders.status FILTER",
                  "first": "people.first IDENTITY, people.id FILTER, orders.person FILTER, orders.status FILTER"}}),
    Case("left_anti_join_keys", "join", "dataframe", _left_anti_join,
         {"out": {"id": f"orders.id IDENTITY, {_ORDERS_RETURNS}",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_RETURNS}"}}),
    Case("join_using_writes_the_left_key", "join", "sql", _join_using,
         {"out": {"id": f"people.id IDENTITY, {_ORDERS_PEOPLE}",
                  "first": f"people.first IDENTITY, {_ORDERS_PEOPLE}",
                  "amount": f"orders.amount IDENTITY, {_ORDERS_PEOPLE}"}}),
    Case("cross_join_where_is_a_filter", "join", "sql", _cross_join_where,
         {"out": {"first": "people.first IDENTITY, people.age FILTER, products.price FILTER",
                  "name": "products.name IDENTITY, people.age FILTER, products.price FILTER"}}),
    Case("group_by_sum_avg_min_max", "aggregate", "sql", _sum_avg_min_max,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY",
                  "total": "orders.amount AGGREGATION, orders.person GROUP_BY",
                  "mean": "orders.amount AGGREGATION, orders.person GROUP_BY",
                  "first_placed": "orders.placed AGGREGATION, orders.person GROUP_BY",
                  "most": "orders.quantity AGGREGATION, orders.person GROUP_BY"}}),
    Case("count_star_reads_nothing_count_column_masks", "aggregate", "dataframe", _count_star_and_column,
         {"out": {"status": "orders.status IDENTITY, orders.status GROUP_BY",
                  "n": "orders.status GROUP_BY",
                  "tagged": "orders.tags AGGREGATION masked, orders.status GROUP_BY"}}),
    Case("count_distinct_masks", "aggregate", "sql", _count_distinct,
         {"out": {"state": "people.state IDENTITY, people.state GROUP_BY",
                  "surnames": "people.last AGGREGATION masked, people.state GROUP_BY"}}),
    Case("having_filters_every_column", "aggregate", "sql", _having,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY, orders.quantity FILTER",
                  "total": "orders.amount AGGREGATION, orders.person GROUP_BY, orders.quantity FILTER"}}),
    Case("having_on_a_count_is_a_masked_filter", "aggregate", "sql", _having_on_a_count,
         {"out": {"state": "people.state IDENTITY, people.state GROUP_BY, people.email FILTER masked",
                  "oldest": "people.age AGGREGATION, people.state GROUP_BY, people.email FILTER masked"}}),
    Case("group_by_an_expression", "aggregate", "dataframe", _group_by_expression,
         {"out": {"year": "orders.placed TRANSFORMATION, orders.placed GROUP_BY",
                  "units": "orders.quantity AGGREGATION, orders.placed GROUP_BY"}}),
    Case("aggregate_over_join_keeps_join_keys", "aggregate", "sql", _aggregate_over_join,
         {"out": {"state": f"people.state IDENTITY, people.state GROUP_BY, {_ORDERS_PEOPLE}",
                  "spent": f"orders.amount AGGREGATION, people.state GROUP_BY, {_ORDERS_PEOPLE}"}}),
    Case("count_distinct_over_joined_frames", "aggregate", "dataframe", _aggregate_over_join_frames,
         {"out": {"category": "products.category IDENTITY, products.category GROUP_BY, "
                              "products.id JOIN, orders.product JOIN",
                  "buyers": "orders.person AGGREGATION masked, products.category GROUP_BY, "
                            "products.id JOIN, orders.product JOIN"}}),
    Case("rollup_groups_by_every_key", "aggregate", "sql", _rollup,
         {"out": {"state": "people.state IDENTITY, people.state GROUP_BY, people.last GROUP_BY",
                  "last": "people.last IDENTITY, people.state GROUP_BY, people.last GROUP_BY",
                  "n": "people.state GROUP_BY, people.last GROUP_BY"}}),
    Case("cube_groups_by_every_key", "aggregate", "dataframe", _cube,
         {"out": {"status": "orders.status IDENTITY, orders.status GROUP_BY, orders.product GROUP_BY",
                  "product": "orders.product IDENTITY, orders.status GROUP_BY, orders.product GROUP_BY",
                  "total": "orders.amount AGGREGATION, orders.status GROUP_BY, orders.product GROUP_BY"}}),
    Case("grouping_sets_grouping_flag_reads_no_value", "aggregate", "sql", _grouping_sets,
         {"out": {"status": "orders.status IDENTITY, orders.status GROUP_BY, orders.person GROUP_BY",
                  "person": "orders.person IDENTITY, orders.status GROUP_BY, orders.person GROUP_BY",
                  "status_rolled_up": "orders.status GROUP_BY, orders.person GROUP_BY",
                  "units": "orders.quantity AGGREGATION, orders.status GROUP_BY, orders.person GROUP_BY"}}),
    Case("collect_list_and_set_aggregate", "aggregate", "dataframe", _collect_list_and_set,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY",
                  "order_ids": "orders.id AGGREGATION, orders.person GROUP_BY",
                  "statuses": "orders.status AGGREGATION, orders.person GROUP_BY"}}),
    Case("aggregate_without_group_by", "aggregate", "sql", _aggregate_without_group_by,
         {"out": {"n": "", "revenue": "orders.amount AGGREGATION", "latest": "orders.placed AGGREGATION"}}),
    Case("first_and_last_aggregate", "aggregate", "dataframe", _first_last,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY",
                  "first_status": "orders.status AGGREGATION, orders.person GROUP_BY",
                  "last_amount": "orders.amount AGGREGATION, orders.person GROUP_BY"}}),
    Case("ranking_functions_read_only_their_window", "window", "sql", _ranking_functions,
         {"out": {"id": "orders.id IDENTITY",
                  "rn": "orders.person WINDOW, orders.amount WINDOW",
                  "rk": "orders.amount WINDOW",
                  "dr": "orders.status WINDOW, orders.placed WINDOW"}}),
    Case("sum_over_partition_order", "window", "dataframe", _sum_over_partition,
         {"out": {"id": "orders.id IDENTITY",
                  "running": "orders.amount AGGREGATION, orders.person WINDOW, orders.placed WINDOW"}}),
    Case("running_total_rows_frame", "window", "sql", _running_total_rows,
         {"out": {"id": "orders.id IDENTITY", "placed": "orders.placed IDENTITY",
                  "units_so_far": "orders.quantity AGGREGATION, orders.placed WINDOW, orders.id WINDOW"}}),
    Case("lag_and_lead_transform", "window", "dataframe", _lag_lead,
         {"out": {"id": "orders.id IDENTITY",
                  "previous": "orders.amount TRANSFORMATION, orders.person WINDOW, orders.placed WINDOW",
                  "next_placed": "orders.placed TRANSFORMATION, orders.person WINDOW, orders.placed WINDOW"}}),
    Case("filter_on_row_number_filters_by_its_window", "window", "sql", _first_row_per_group,
         {"out": {"id": "orders.id IDENTITY, orders.person FILTER, orders.amount FILTER",
                  "person": "orders.person IDENTITY, orders.person FILTER, orders.amount FILTER",
                  "amount": "orders.amount IDENTITY, orders.person FILTER, orders.amount FILTER"}}),
    Case("rank_over_a_group_by", "window", "sql", _window_over_group_by,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY",
                  "total": "orders.amount AGGREGATION, orders.person GROUP_BY",
                  "place": "orders.amount WINDOW, orders.person GROUP_BY"}}),
    Case("ntile_and_partition_average", "window", "dataframe", _ntile_and_partition_average,
         {"out": {"id": "orders.id IDENTITY",
                  "half": "orders.amount WINDOW",
                  "status_mean": "orders.amount AGGREGATION, orders.status WINDOW",
                  "gap": "orders.amount TRANSFORMATION, orders.amount AGGREGATION, orders.status WINDOW"}}),
    Case("filter_on_written_dense_rank", "window", "dataframe", _filter_on_dense_rank,
         {"out": {"product": "orders.product IDENTITY, orders.product FILTER, orders.quantity FILTER",
                  "person": "orders.person IDENTITY, orders.product FILTER, orders.quantity FILTER",
                  "rk": "orders.product WINDOW, orders.quantity WINDOW, "
                        "orders.product FILTER, orders.quantity FILTER"}}),
    Case("select_distinct_groups_by_every_column", "distinct", "sql", _select_distinct,
         {"out": {"state": "people.state IDENTITY, people.state GROUP_BY, people.last GROUP_BY",
                  "last": "people.last IDENTITY, people.state GROUP_BY, people.last GROUP_BY"}}),
    Case("distinct_of_an_expression", "distinct", "dataframe", _distinct_of_expression,
         {"out": {"st": "people.state TRANSFORMATION, people.state GROUP_BY"}}),
    Case("drop_duplicates_groups_by_its_keys_only", "distinct", "dataframe", _drop_duplicates_keys,
         {"out": {"id": "orders.id IDENTITY, orders.person GROUP_BY",
                  "person": "orders.person IDENTITY, orders.person GROUP_BY",
                  "amount": "orders.amount IDENTITY, orders.person GROUP_BY"}}),
    Case("distinct_over_join", "distinct", "sql", _distinct_over_join,
         {"out": {"state": f"people.state IDENTITY, people.state GROUP_BY, {_ORDERS_PEOPLE}"}}),
    Case("order_by_an_expression", "sort", "sql", _order_by_expression,
         {"out": {"id": "orders.id IDENTITY, orders.amount SORT, orders.quantity SORT, orders.id SORT",
                  "amount": "orders.amount IDENTITY, orders.amount SORT, orders.quantity SORT, orders.id SORT"}}),
    Case("sort_within_partitions", "sort", "dataframe", _sort_within_partitions,
         {"out": {"id": "orders.id IDENTITY, orders.placed SORT",
                  "placed": "orders.placed IDENTITY, orders.placed SORT"}}),
    Case("sort_by_a_length_masks_the_sort", "sort", "dataframe", _sort_by_unwritten_length,
         {"out": {"first": "people.first IDENTITY, people.last SORT masked, people.age SORT"}}),
]
