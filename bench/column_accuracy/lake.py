"""The tables every case reads: parquet folders under a temporary lake, each registered as a temp
view of its name, so a SQL case reads ``people`` and a DataFrame case ``spark.table("people")``;
captured sources are named by the folder (``people``).

- ``people``: id int, first string, last string, age int, state string, email string,
  ssn string, address struct<city: string, zip: string>, phones array<string>
- ``orders``: id int, person int, product int, amount double, quantity int, tags string,
  placed date, status string
- ``products``: id int, name string, category string, price double
- ``returns``: order_id int, reason string, refunded double
"""

from __future__ import annotations

import datetime
from pathlib import Path

from pyspark.sql import SparkSession

TABLES = {
    "people": ("id int, first string, last string, age int, state string, email string, ssn string, "
               "address struct<city: string, zip: string>, phones array<string>",
               [(1, "John", "Smith", 31, "CA", "john@example.com", "123-45-6789", ("Oakland", "94601"), ["555-1"]),
                (2, "Ann", "Lee", 40, "NY", "ann@example.com", "987-65-4321", ("Albany", "12201"), ["555-2", "555-3"]),
                (3, "Raj", "Patel", 17, "CA", None, None, ("Fresno", "93650"), [])]),
    "orders": ("id int, person int, product int, amount double, quantity int, tags string, placed date, "
               "status string",
               [(1, 1, 1, 10.0, 1, "a,b", datetime.date(2026, 11, 1), "paid"),
                (2, 1, 2, 5.0, 2, "c", datetime.date(2026, 11, 2), "open"),
                (3, 2, 1, 7.5, 3, "d,e", datetime.date(2026, 11, 3), "paid")]),
    "products": ("id int, name string, category string, price double",
                 [(1, "lamp", "home", 10.0), (2, "pen", "office", 2.5)]),
    "returns": ("order_id int, reason string, refunded double", [(3, "broken", 7.5)]),
}


def build(spark: SparkSession, root: Path) -> None:
    """Write the tables under ``root`` and register each as a temp view of its name."""
    for name, (schema, rows) in TABLES.items():
        path = str(root / name)
        spark.createDataFrame(rows, schema).write.mode("overwrite").parquet(path)
        spark.read.parquet(path).createOrReplaceTempView(name)
