"""Unions, subqueries, CTEs, generators, nested data, several outputs, catalog tables, views,
conditionals and projections, in SQL and DataFrame forms."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from bench.column_accuracy.case import Case, Outputs


def _table(out: Outputs, output: str) -> str:
    """The catalog name of an output written as a table: the last segment of its path."""
    return out(output).rsplit("/", 1)[-1]


# union


def _union_all_positional(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, first as name from people union all select id, name from products")
     .write.parquet(out("out")))


def _union_by_name(spark: SparkSession, out: Outputs) -> None:
    people = spark.table("people").select("id", F.col("state").alias("code"))
    products = spark.table("products").select(F.col("category").alias("code"), "id")
    people.unionByName(products).write.parquet(out("out"))


def _union_distinct(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select state as label, id from people union select category, id from products").write.parquet(out("out"))


def _union_of_three_branches(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people").select("id", F.col("first").alias("name"))
     .union(spark.table("products").select("id", "name"))
     .union(spark.table("orders").select("id", "status"))
     .write.parquet(out("out")))


def _union_with_literal_column(spark: SparkSession, out: Outputs) -> None:
    adults = spark.table("people").where("age >= 18").select("id", F.lit("adult").alias("kind"))
    items = spark.table("products").select("id", F.lit("product").alias("kind"))
    adults.unionAll(items).write.parquet(out("out"))


# subquery


def _scalar_subquery_in_select(spark: SparkSession, out: Outputs) -> None:
    top_price = spark.table("products").select(F.max("price")).scalar()
    spark.table("people").select("id", top_price.alias("top_price")).write.parquet(out("out"))


def _in_subquery_in_where(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, amount from orders "
               "where product in (select id from products where category = 'home')")
     .write.parquet(out("out")))


def _exists_subquery(spark: SparkSession, out: Outputs) -> None:
    paid = (spark.table("orders").alias("o")
            .where((F.col("o.person") == F.col("p.id").outer()) & (F.col("o.status") == "paid")))
    spark.table("people").alias("p").where(paid.exists()).select("id", "first").write.parquet(out("out"))


def _derived_table_in_from(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select t.person, t.total from (select person, sum(amount) as total from orders group by person) t "
               "where t.total > 6")
     .write.parquet(out("out")))


def _correlated_scalar_subquery(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select p.id, (select sum(o.amount) from orders o where o.person = p.id) as spent from people p")
     .write.parquet(out("out")))


# cte


def _one_cte(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("with paid as (select id, amount from orders where status = 'paid') "
               "select id, amount * 2 as doubled from paid")
     .write.parquet(out("out")))


def _chained_ctes(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("with big as (select person, amount from orders where amount > 6), "
               "per as (select person, sum(amount) as total from big group by person) "
               "select person, round(total, 1) as total from per")
     .write.parquet(out("out")))


def _cte_used_twice(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("with paid as (select person, amount from orders where status = 'paid') "
               "select a.person, a.amount, b.amount as other from paid a join paid b "
               "on a.person = b.person and a.amount < b.amount")
     .write.parquet(out("out")))


# generator


def _explode(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people").select("id", F.col("address.city").alias("city"), F.explode("phones").alias("phone"))
     .write.parquet(out("out")))


def _explode_outer(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, explode_outer(phones) as phone from people").write.parquet(out("out"))


def _posexplode(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").select("id", F.posexplode("phones").alias("pos", "phone")).write.parquet(out("out"))


def _lateral_view_explode(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select o.id, t.tag from orders o lateral view explode(split(o.tags, ',')) t as tag")
     .write.parquet(out("out")))


def _inline_array_of_structs(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, inline(array(named_struct('name', first, 'part', 'first'), "
               "named_struct('name', last, 'part', 'last'))) from people")
     .write.parquet(out("out")))


def _split_explode_then_filter(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").withColumn("tag", F.explode(F.split("tags", ",")))
     .where(F.col("tag") != "c")
     .select("id", "status", F.upper("tag").alias("tag"))
     .write.parquet(out("out")))


# nested


def _struct_field(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, address.city as city from people where address.zip like '9%'").write.parquet(out("out"))


def _build_struct(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").select("id", F.struct("first", "last").alias("name")).write.parquet(out("out"))


def _field_of_built_struct(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, s.given, s.years "
               "from (select id, named_struct('given', first, 'years', age + 1) as s from people)")
     .write.parquet(out("out")))


def _array_element(spark: SparkSession, out: Outputs) -> None:
    # the adults all have a phone: phones[0] of an empty array fails under ANSI mode
    (spark.table("people").where("age >= 18").select("id", F.col("phones")[0].alias("first_phone"))
     .write.parquet(out("out")))


def _array_size(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, size(phones) as phone_count from people").write.parquet(out("out"))


def _map_from_columns(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people").select("id", F.create_map(F.lit("first"), "first", F.lit("last"), "last").alias("names"))
     .write.parquet(out("out")))


# multi-output


def _one_frame_two_outputs(spark: SparkSession, out: Outputs) -> None:
    adults = spark.table("people").where("age > 18").select("id", F.upper("last").alias("last"))
    adults.write.parquet(out("all"))
    adults.where(F.col("last") != "LEE").write.json(out("not_lee"))


def _hive_multi_insert(spark: SparkSession, out: Outputs) -> None:
    spark.sql(f"create table {_table(out, 'ca')} (id int, first string) using parquet location '{out('ca')}'")
    spark.sql(f"create table {_table(out, 'ages')} (id int, doubled int) using parquet location '{out('ages')}'")
    spark.sql(f"from people insert into {_table(out, 'ca')} select id, first where state = 'CA' "
              f"insert into {_table(out, 'ages')} select id, age * 2")


# table


def _save_as_table(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").select("id", (F.col("amount") * 1.1).alias("gross"))
     .write.mode("overwrite").option("path", out("t")).saveAsTable(_table(out, "t")))


def _insert_into_by_position(spark: SparkSession, out: Outputs) -> None:
    spark.sql(f"create table {_table(out, 't')} (id int, contact string) using parquet location '{out('t')}'")
    spark.table("people").select("id", F.lower("email").alias("email")).write.insertInto(_table(out, "t"))


def _create_table_as_select(spark: SparkSession, out: Outputs) -> None:
    spark.sql(f"create table {_table(out, 't')} using parquet location '{out('t')}' "
              "as select state, count(*) as n from people group by state")


def _insert_overwrite(spark: SparkSession, out: Outputs) -> None:
    spark.sql(f"create table {_table(out, 't')} (person int, total double) using parquet location '{out('t')}'")
    spark.sql(f"insert overwrite table {_table(out, 't')} "
              "select person, sum(amount) from orders where status = 'paid' group by person")


# view


def _temp_view_over_filtered_frame(spark: SparkSession, out: Outputs) -> None:
    spark.table("people").where(F.col("age") >= 18).createOrReplaceTempView("structure_adults")
    spark.table("structure_adults").select("id", "email").write.parquet(out("out"))


def _sql_temp_view_with_rename(spark: SparkSession, out: Outputs) -> None:
    spark.sql("create or replace temp view structure_orders_v as "
              "select id as order_id, amount as value, quantity from orders")
    spark.sql("select order_id, value * quantity as total from structure_orders_v").write.parquet(out("out"))


def _view_over_join(spark: SparkSession, out: Outputs) -> None:
    orders, products = spark.table("orders"), spark.table("products")
    (orders.join(products, orders.product == products.id).select(orders.id, products.name, orders.quantity)
     .createOrReplaceTempView("structure_order_lines"))
    spark.table("structure_order_lines").where("quantity > 1").select("id", "name").write.parquet(out("out"))


# conditional


def _nvl2(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, nvl2(email, last, first) as shown from people").write.parquet(out("out"))


def _nullif(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people").select("id", F.nullif("first", "last").alias("first_unless_last"))
     .write.parquet(out("out")))


def _case_several_whens_no_else(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, case when age < 18 then 'minor' when state = 'CA' then lower(state) "
               "when age >= 65 then last end as band from people")
     .write.parquet(out("out")))


def _nested_case(spark: SparkSession, out: Outputs) -> None:
    due = (F.when(F.col("status") == "paid",
                  F.when(F.col("quantity") > 1, F.col("amount") * F.col("quantity")).otherwise(F.col("amount")))
           .otherwise(F.lit(0.0)))
    spark.table("orders").select("id", due.alias("due")).write.parquet(out("out"))


def _simple_case_and_decode(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, case status when 'paid' then amount when 'open' then 0.0 end as settled, "
               "decode(status, 'paid', 'P', 'open', 'O', 'other') as code from orders")
     .write.parquet(out("out")))


# projection


def _select_expr(spark: SparkSession, out: Outputs) -> None:
    (spark.table("orders").selectExpr("id", "amount * quantity as total", "upper(status) as status", "quantity")
     .write.parquet(out("out")))


def _with_column_chain(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people")
     .withColumn("a", F.col("age") + 1)
     .withColumn("b", F.col("a") * 2)
     .withColumn("c", F.concat_ws("-", "first", "b"))
     .withColumn("d", F.upper("c"))
     .withColumn("e", F.length("d"))
     .select("id", "d", "e")
     .write.parquet(out("out")))


def _date_functions(spark: SparkSession, out: Outputs) -> None:
    (spark.sql("select id, year(placed) as y, date_format(placed, 'yyyy-MM') as month, "
               "datediff(date '2026-12-01', placed) as days_left, date_add(placed, 7) as due from orders")
     .write.parquet(out("out")))


def _regexp_extract(spark: SparkSession, out: Outputs) -> None:
    spark.sql("select id, regexp_extract(email, '@(.*)$', 1) as domain from people").write.parquet(out("out"))


def _cast_to_same_type(spark: SparkSession, out: Outputs) -> None:
    (spark.table("people")
     .select(F.col("id").cast("int").alias("id"), F.col("first").cast("string").alias("first"),
             F.col("age").cast("bigint").alias("age"))
     .write.parquet(out("out")))


_EXISTS = "people.id FILTER, orders.person FILTER, orders.status FILTER"
_IN = "orders.product FILTER, products.id FILTER, products.category FILTER"
_DISTINCT = "people.state GROUP_BY, people.id GROUP_BY, products.category GROUP_BY, products.id GROUP_BY"
_PAIRS = "orders.status FILTER, orders.person JOIN, orders.amount JOIN"
_LINES = "orders.product JOIN, products.id JOIN, orders.quantity FILTER"

CASES = [
    # union
    Case("union_all_is_positional", "union", "sql", _union_all_positional,
         {"out": {"id": "people.id IDENTITY, products.id IDENTITY",
                  "name": "people.first IDENTITY, products.name IDENTITY"}}),
    Case("union_by_name_matches_names", "union", "dataframe", _union_by_name,
         {"out": {"id": "people.id IDENTITY, products.id IDENTITY",
                  "code": "people.state IDENTITY, products.category IDENTITY"}}),
    Case("union_distinct_groups_every_column", "union", "sql", _union_distinct,
         {"out": {"label": f"people.state IDENTITY, products.category IDENTITY, {_DISTINCT}",
                  "id": f"people.id IDENTITY, products.id IDENTITY, {_DISTINCT}"}}),
    Case("union_of_three_branches", "union", "dataframe", _union_of_three_branches,
         {"out": {"id": "people.id IDENTITY, products.id IDENTITY, orders.id IDENTITY",
                  "name": "people.first IDENTITY, products.name IDENTITY, orders.status IDENTITY"}}),
    Case("union_with_literal_column_and_branch_filter", "union", "dataframe", _union_with_literal_column,
         {"out": {"id": "people.id IDENTITY, products.id IDENTITY, people.age FILTER",
                  "kind": "people.age FILTER"}}),
    # subquery
    Case("scalar_subquery_in_select", "subquery", "dataframe", _scalar_subquery_in_select,
         {"out": {"id": "people.id IDENTITY", "top_price": "products.price AGGREGATION"}}),
    Case("in_subquery_in_where", "subquery", "sql", _in_subquery_in_where,
         {"out": {"id": f"orders.id IDENTITY, {_IN}", "amount": f"orders.amount IDENTITY, {_IN}"}}),
    Case("correlated_exists_filters", "subquery", "dataframe", _exists_subquery,
         {"out": {"id": f"people.id IDENTITY, {_EXISTS}", "first": f"people.first IDENTITY, {_EXISTS}"}}),
    Case("derived_table_in_from", "subquery", "sql", _derived_table_in_from,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY, orders.amount FILTER",
                  "total": "orders.amount AGGREGATION, orders.person GROUP_BY, orders.amount FILTER"}}),
    Case("correlated_scalar_subquery", "subquery", "sql", _correlated_scalar_subquery,
         {"out": {"id": "people.id IDENTITY",
                  "spent": "orders.amount AGGREGATION, orders.person FILTER, people.id FILTER"}}),
    # cte
    Case("one_cte_with_filter", "cte", "sql", _one_cte,
         {"out": {"id": "orders.id IDENTITY, orders.status FILTER",
                  "doubled": "orders.amount TRANSFORMATION, orders.status FILTER"}}),
    Case("chained_ctes_filter_aggregate_round", "cte", "sql", _chained_ctes,
         {"out": {"person": "orders.person IDENTITY, orders.person GROUP_BY, orders.amount FILTER",
                  "total": "orders.amount AGGREGATION, orders.person GROUP_BY, orders.amount FILTER"}}),
    Case("cte_used_twice_in_a_self_join", "cte", "sql", _cte_used_twice,
         {"out": {"person": f"orders.person IDENTITY, {_PAIRS}",
                  "amount": f"orders.amount IDENTITY, {_PAIRS}",
                  "other": f"orders.amount IDENTITY, {_PAIRS}"}}),
    # generator
    Case("explode_array_beside_nested_field", "generator", "dataframe", _explode,
         {"out": {"id": "people.id IDENTITY", "city": "people.address.city IDENTITY",
                  "phone": "people.phones TRANSFORMATION"}}),
    Case("explode_outer_array", "generator", "sql", _explode_outer,
         {"out": {"id": "people.id IDENTITY", "phone": "people.phones TRANSFORMATION"}}),
    Case("posexplode_position_masks", "generator", "dataframe", _posexplode,
         {"out": {"id": "people.id IDENTITY", "pos": "people.phones TRANSFORMATION masked",
                  "phone": "people.phones TRANSFORMATION"}}),
    Case("lateral_view_explode_split", "generator", "sql", _lateral_view_explode,
         {"out": {"id": "orders.id IDENTITY", "tag": "orders.tags TRANSFORMATION"}}),
    Case("inline_array_of_built_structs", "generator", "sql", _inline_array_of_structs,
         {"out": {"id": "people.id IDENTITY", "name": "people.first IDENTITY, people.last IDENTITY",
                  "part": ""}}),
    Case("split_explode_then_filter_on_element", "generator", "dataframe", _split_explode_then_filter,
         {"out": {"id": "orders.id IDENTITY, orders.tags FILTER",
                  "status": "orders.status IDENTITY, orders.tags FILTER",
                  "tag": "orders.tags TRANSFORMATION, orders.tags FILTER"}}),
    # nested
    Case("struct_field_read_and_filtered", "nested", "sql", _struct_field,
         {"out": {"id": "people.id IDENTITY, people.address.zip FILTER",
                  "city": "people.address.city IDENTITY, people.address.zip FILTER"}}),
    Case("struct_built_from_columns", "nested", "dataframe", _build_struct,
         {"out": {"id": "people.id IDENTITY", "name": "people.first TRANSFORMATION, people.last TRANSFORMATION"}}),
    Case("field_of_a_built_struct", "nested", "sql", _field_of_built_struct,
         {"out": {"id": "people.id IDENTITY", "given": "people.first IDENTITY",
                  "years": "people.age TRANSFORMATION"}}),
    Case("array_element_by_index", "nested", "dataframe", _array_element,
         {"out": {"id": "people.id IDENTITY, people.age FILTER",
                  "first_phone": "people.phones TRANSFORMATION, people.age FILTER"}}),
    Case("array_size_masks", "nested", "sql", _array_size,
         {"out": {"id": "people.id IDENTITY", "phone_count": "people.phones TRANSFORMATION masked"}}),
    Case("map_built_from_columns", "nested", "dataframe", _map_from_columns,
         {"out": {"id": "people.id IDENTITY",
                  "names": "people.first TRANSFORMATION, people.last TRANSFORMATION"}}),
    # multi-output
    Case("one_frame_written_twice", "multi-output", "dataframe", _one_frame_two_outputs,
         {"all": {"id": "people.id IDENTITY, people.age FILTER",
                  "last": "people.last TRANSFORMATION, people.age FILTER"},
          "not_lee": {"id": "people.id IDENTITY, people.age FILTER, people.last FILTER",
                      "last": "people.last TRANSFORMATION, people.age FILTER, people.last FILTER"}}),
    Case("hive_multi_insert_two_tables", "multi-output", "sql", _hive_multi_insert,
         {"ca": {"id": "people.id IDENTITY, people.state FILTER",
                 "first": "people.first IDENTITY, people.state FILTER"},
          "ages": {"id": "people.id IDENTITY", "doubled": "people.age TRANSFORMATION"}},
         tables=("ca", "ages")),
    # table
    Case("save_as_table", "table", "dataframe", _save_as_table,
         {"t": {"id": "orders.id IDENTITY", "gross": "orders.amount TRANSFORMATION"}}, tables=("t",)),
    Case("insert_into_by_position", "table", "dataframe", _insert_into_by_position,
         {"t": {"id": "people.id IDENTITY", "contact": "people.email TRANSFORMATION"}}, tables=("t",)),
    Case("create_table_as_select", "table", "sql", _create_table_as_select,
         {"t": {"state": "people.state IDENTITY, people.state GROUP_BY", "n": "people.state GROUP_BY"}},
         tables=("t",)),
    Case("insert_overwrite_aggregate", "table", "sql", _insert_overwrite,
         {"t": {"person": "orders.person IDENTITY, orders.person GROUP_BY, orders.status FILTER",
                "total": "orders.amount AGGREGATION, orders.person GROUP_BY, orders.status FILTER"}},
         tables=("t",)),
    # view
    Case("temp_view_over_filtered_frame", "view", "dataframe", _temp_view_over_filtered_frame,
         {"out": {"id": "people.id IDENTITY, people.age FILTER",
                  "email": "people.email IDENTITY, people.age FILTER"}}),
    Case("sql_temp_view_with_rename", "view", "sql", _sql_temp_view_with_rename,
         {"out": {"order_id": "orders.id IDENTITY",
                  "total": "orders.amount TRANSFORMATION, orders.quantity TRANSFORMATION"}}),
    Case("temp_view_over_join_filtered", "view", "dataframe", _view_over_join,
         {"out": {"id": f"orders.id IDENTITY, {_LINES}", "name": f"products.name IDENTITY, {_LINES}"}}),
    # conditional
    Case("nvl2_tests_its_first", "conditional", "sql", _nvl2,
         {"out": {"id": "people.id IDENTITY",
                  "shown": "people.last TRANSFORMATION, people.first TRANSFORMATION, people.email CONDITIONAL"}}),
    Case("nullif_compares_both", "conditional", "dataframe", _nullif,
         {"out": {"id": "people.id IDENTITY",
                  "first_unless_last": "people.first TRANSFORMATION, people.first CONDITIONAL, "
                                       "people.last CONDITIONAL"}}),
    Case("case_several_whens_no_else", "conditional", "sql", _case_several_whens_no_else,
         {"out": {"id": "people.id IDENTITY",
                  "band": "people.state TRANSFORMATION, people.last TRANSFORMATION, people.age CONDITIONAL, "
                          "people.state CONDITIONAL"}}),
    Case("nested_case", "conditional", "dataframe", _nested_case,
         {"out": {"id": "orders.id IDENTITY",
                  "due": "orders.amount TRANSFORMATION, orders.quantity TRANSFORMATION, orders.status CONDITIONAL, "
                         "orders.quantity CONDITIONAL"}}),
    Case("simple_case_and_decode", "conditional", "sql", _simple_case_and_decode,
         {"out": {"id": "orders.id IDENTITY", "settled": "orders.amount TRANSFORMATION, orders.status CONDITIONAL",
                  "code": "orders.status CONDITIONAL"}}),
    # projection
    Case("select_expr_strings", "projection", "dataframe", _select_expr,
         {"out": {"id": "orders.id IDENTITY",
                  "total": "orders.amount TRANSFORMATION, orders.quantity TRANSFORMATION",
                  "status": "orders.status TRANSFORMATION", "quantity": "orders.quantity IDENTITY"}}),
    Case("with_column_chain_of_five", "projection", "dataframe", _with_column_chain,
         {"out": {"id": "people.id IDENTITY", "d": "people.first TRANSFORMATION, people.age TRANSFORMATION",
                  "e": "people.first TRANSFORMATION masked, people.age TRANSFORMATION masked"}}),
    Case("date_functions_on_placed", "projection", "sql", _date_functions,
         {"out": {"id": "orders.id IDENTITY", "y": "orders.placed TRANSFORMATION",
                  "month": "orders.placed TRANSFORMATION", "days_left": "orders.placed TRANSFORMATION",
                  "due": "orders.placed TRANSFORMATION"}}),
    Case("regexp_extract_domain", "projection", "sql", _regexp_extract,
         {"out": {"id": "people.id IDENTITY", "domain": "people.email TRANSFORMATION"}}),
    Case("cast_to_same_type_is_identity", "projection", "dataframe", _cast_to_same_type,
         {"out": {"id": "people.id IDENTITY", "first": "people.first IDENTITY",
                  "age": "people.age TRANSFORMATION"}}),
]
