"""Spark plan expressions named and described as code, in pure Python: which call of an
expression made a column (``top_function``; ``innermost_call``, the one call several columns
share), its function's name (``ConcatWs`` -> ``concat_ws``) and a description that reads like
the code (``concat_ws(' ', first, last)``, at most ``MAX_DESCRIPTION`` characters), for the
operations ``lineage.spark.plan_analysis`` records. Expressions are ``lineage.spark.plan_tree``
nodes.
"""

from __future__ import annotations

import re

from lineage.spark.plan_tree import Node, struct_path

_SYMBOLS = {"Add": "+", "Subtract": "-", "Multiply": "*", "Divide": "/", "Remainder": "%", "IntegralDivide": "div",
            "EqualTo": "=", "EqualNullSafe": "<=>", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
            "GreaterThanOrEqual": ">=", "And": "AND", "Or": "OR", "BitwiseAnd": "&", "BitwiseOr": "|",
            "BitwiseXor": "^"}
_NAMES = {"ConcatWs": "concat_ws", "Md5": "md5", "Sha1": "sha1", "Sha2": "sha2", "Crc32": "crc32",
          "Murmur3Hash": "hash", "XxHash64": "xxhash64", "Average": "avg", "Cast": "cast", "CaseWhen": "case",
          "If": "if", "Coalesce": "coalesce", "Explode": "explode", "RowNumber": "row_number",
          "DenseRank": "dense_rank", "Rank": "rank", "WindowExpression": "window", "AggregateExpression": "aggregate",
          "Concat": "concat", "Substring": "substring", "Upper": "upper", "Lower": "lower", "Not": "not",
          # classes whose SQL name is not their snake case
          "InitCap": "initcap", "StringTrim": "trim", "StringTrimLeft": "ltrim", "StringTrimRight": "rtrim",
          "RegExpReplace": "regexp_replace", "RegExpExtract": "regexp_extract", "StringSplit": "split",
          "StringReplace": "replace", "StringLPad": "lpad", "StringRPad": "rpad", "SubstringIndex": "substring_index",
          "StringLocate": "locate", "SoundEx": "soundex", "UnBase64": "unbase64", "DateFormatClass": "date_format",
          "ParseToDate": "to_date", "ParseToTimestamp": "to_timestamp", "FromUnixTime": "from_unixtime",
          "DayOfMonth": "dayofmonth", "DayOfWeek": "dayofweek", "DayOfYear": "dayofyear", "WeekOfYear": "weekofyear",
          "DateDiff": "datediff", "TruncDate": "trunc", "TruncTimestamp": "date_trunc", "UnaryMinus": "negative",
          "MonotonicallyIncreasingID": "monotonically_increasing_id", "NTile": "ntile",
          "CreateNamedStruct": "struct", "CreateArray": "array", "CreateMap": "map", "JsonToStructs": "from_json",
          "StructsToJson": "to_json", "GetArrayItem": "get", "GetMapValue": "element_at", "Pmod": "pmod",
          "CollectList": "collect_list", "CollectSet": "collect_set", "CountIf": "count_if",
          "ApproximateCountDistinct": "approx_count_distinct", "HyperLogLogPlusPlus": "approx_count_distinct"}
MAX_DESCRIPTION = 300


def function_name(kind: str) -> str:
    """``ConcatWs`` -> ``concat_ws``, ``Add`` -> ``add``, ``Sum`` -> ``sum``."""
    return _NAMES.get(kind) or re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower()


def describe(expression: Node) -> str:
    """The expression as code: ``concat_ws(' ', first, last)``, ``(age * 2)``, ``sum(amount)``."""
    text = _describe(expression)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def _describe(node: Node) -> str:
    kind = node.kind
    if kind in ("AttributeReference", "OuterReference", "UnresolvedAttribute"):
        return str(node.fields.get("name"))
    if kind == "Literal":
        value = node.fields.get("value")
        return "NULL" if value is None else repr(value) if node.fields.get("dataType") == "string" else str(value)
    if kind == "Alias":
        return _describe(node.children[0]) if node.children else ""
    if kind == "GetStructField" and node.children:
        attribute, path = struct_path(node)
        if attribute is not None:
            return ".".join((str(attribute.fields.get("name")), *path))
        return f"{_describe(node.children[0])}.{node.fields.get('name') or node.fields.get('ordinal')}"
    if kind == "AggregateExpression":
        inner = _describe(node.children[0]) if node.children else "?"
        return inner.replace("(", "(DISTINCT ", 1) if node.fields.get("isDistinct") else inner
    if kind == "Cast":
        return f"CAST({_describe(node.children[0])} AS {node.fields.get('dataType')})" if node.children else "CAST"
    if kind in _SYMBOLS and len(node.children) == 2:
        return f"({_describe(node.children[0])} {_SYMBOLS[kind]} {_describe(node.children[1])})"
    if kind == "CaseWhen":
        parts = [_describe(child) for child in node.children]
        pairs = " ".join(f"WHEN {parts[i]} THEN {parts[i + 1]}" for i in range(0, len(parts) - 1, 2))
        tail = f" ELSE {parts[-1]}" if len(parts) % 2 else ""
        return f"CASE {pairs}{tail} END"
    if kind == "WindowExpression":
        return f"{_describe(node.children[0])} OVER (...)" if node.children else "window"
    return f"{function_name(kind)}({', '.join(_describe(child) for child in node.children)})"


def innermost_call(expression: Node) -> Node | None:
    """The one function call of ``expression`` that reads its columns directly (``split(body,
    ',')`` in ``CAST(split(body, ',')[2] AS int)``), or None when there are several or none."""
    calls: dict[str, Node] = {}

    def walk(node: Node) -> None:
        if node.kind in ("AttributeReference", "OuterReference", "Literal"):
            return
        if any(child.kind in ("AttributeReference", "OuterReference") for child in node.children):
            calls.setdefault(describe(node), node)
        for child in node.children:
            walk(child)

    walk(expression)
    return next(iter(calls.values())) if len(calls) == 1 else None


def same_type_cast(node: Node) -> bool:
    """A cast of a column to the type it already has: what Spark puts between a SQL view's query
    and its readers (the view's stored column types). It changes nothing."""
    if node.kind != "Cast" or len(node.children) != 1:
        return False
    child = node.children[0]
    return (child.kind == "AttributeReference" and node.fields.get("dataType") is not None
            and child.fields.get("dataType") == node.fields.get("dataType"))


def top_function(expression: Node) -> Node | None:
    """The function at the top of a named expression (under Alias and casts Spark inserted)."""
    node = expression
    while (node.kind in ("Alias", "KnownNotNull", "PromotePrecision") or same_type_cast(node)) and node.children:
        node = node.children[0]
    if node.kind == "AggregateExpression" and node.children:
        node = node.children[0]
    if node.kind == "GetStructField" and struct_path(node)[0] is not None:
        return None  # a nested field read as is
    return None if node.kind in ("AttributeReference", "OuterReference") else node
