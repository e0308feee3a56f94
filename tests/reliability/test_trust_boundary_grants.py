"""The trust boundary of reads (issue 28, items 3 and 4), through the plugin's app with real
Airflow JWTs over a real PostgreSQL warehouse.

- An alias (OpenLineage's symlinks) in a namespace the caller reads, standing for a dataset of a
  namespace they cannot read, answers as a name that is nothing: the same status and body as an
  unknown name, no word of the dataset behind it.
- A dataset grant on a name holding ``/`` (every OpenLineage and captured dataset), its entity
  written raw or ``%2F``-encoded, is stored under the key the dataset is checked on, so the
  grantee reads that dataset (and no other); hostile entities are a clear 400.

The warehouse: namespaces ``sales`` and ``hr``; datasets ``s3://lake/orders``,
``s3://lake/other`` and ``s3://sales-raw/orders_copy`` in ``sales``, and in ``hr`` an alias
``hive://metastore/hr.orders_copy`` of ``sales``' ``s3://sales-raw/orders_copy``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.airflow_support import admin_client
from tests.conftest import create_scratch_db, drop_scratch_db
from warehouse.db.connection import connect
from warehouse.pipeline.dbt_build import build_marts
from warehouse.service.authorization import grant_subject, grant_target

V3 = "/v3"
ORDERS = "s3://lake/orders"
OTHER = "s3://lake/other"
COPY = "s3://sales-raw/orders_copy"
ALIAS = "hive://metastore/hr.orders_copy"
UNKNOWN = "hive://metastore/hr.nothing_here"
WINDOW = {"start": "0", "end": "1800000000"}  # one fixed window: answers compare whole


def headers_of(user: str) -> dict[str, str]:
    """A real Airflow JWT of ``user``, an ordinary (non-admin) Airflow user."""
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    jwt = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username=user, role="viewer"))
    return {"Authorization": f"Bearer {jwt}"}


def lineage_path(namespace: str, dataset: str) -> str:
    return f"{V3}/namespaces/{namespace}/datasets/{quote(dataset, safe='')}/lineage"


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    url = create_scratch_db("trust_grants")
    with admin_client(url) as client:
        for namespace in ("sales", "hr"):
            assert client.put(f"{V3}/namespaces/{namespace}").status_code == 200
        with connect(url) as conn:
            for name in (ORDERS, OTHER, COPY):
                conn.execute("insert into lineage.datasets (namespace, dataset_type, dataset) "
                             "values ('sales', 'dataset', %s)", (name,))
            conn.execute("""insert into lineage.dataset_aliases (namespace, alias, alias_type, dataset_key,
                                                               event_time, batch_id)
                            select 'hr', %s, 'TABLE', dataset_key, now(), 'test'
                            from lineage.datasets where namespace = 'sales' and dataset = %s""", (ALIAS, COPY))
            conn.commit()
        build_marts(url, command="run", select="+lineage_walk")
        grant(client, "hr-reader", "namespaces/hr", "READ")
        yield client
    drop_scratch_db(url)


def grant(client: TestClient, principal: str, entity: str, privilege: str = "READ") -> dict[str, Any]:
    done = client.put(f"{V3}/grants", json={"principal": principal, "entity": entity, "privilege": privilege})
    assert done.status_code == 200, done.text
    return done.json()  # type: ignore[no-any-return]


# 3. Aliases do not leak


def test_an_alias_into_an_unreadable_namespace_answers_as_an_unknown_name(api: TestClient) -> None:
    """Before: ``403 user 'hr-reader' needs READ on namespace=sales,dataset=s3://sales-raw/orders_copy``
    for the alias, ``200`` with nothing for an unknown name."""
    reader = headers_of("hr-reader")
    alias = api.get(lineage_path("hr", ALIAS), params=WINDOW, headers=reader)
    unknown = api.get(lineage_path("hr", UNKNOWN), params=WINDOW, headers=reader)
    assert (alias.status_code, alias.json()) == (unknown.status_code, unknown.json())
    assert alias.status_code == 200 and alias.json()["relations"] == []
    for secret in ("sales", "orders_copy", "sales-raw"):
        assert secret not in alias.text, alias.text
    # the alias still finds its dataset for a caller who may read it
    assert api.get(lineage_path("hr", ALIAS), params=WINDOW).status_code == 200


def test_an_alias_and_an_unknown_name_are_refused_alike_without_read_on_the_name(api: TestClient) -> None:
    grant(api, "outsider", "namespaces/hr/datasets/somewhere_else")  # holds something in hr
    outsider = headers_of("outsider")
    alias = api.get(lineage_path("hr", ALIAS), params=WINDOW, headers=outsider)
    unknown = api.get(lineage_path("hr", UNKNOWN), params=WINDOW, headers=outsider)
    assert alias.status_code == unknown.status_code == 403
    assert alias.json()["message"] == unknown.json()["message"].replace(UNKNOWN, ALIAS)
    assert "sales" not in alias.text, alias.text


# 4. Dataset grants on names holding /


@pytest.mark.parametrize("entity", [
    f"namespaces/sales/datasets/{ORDERS}",                      # raw
    f"namespaces/sales/datasets/{quote(ORDERS, safe='')}",      # %2F-encoded, as links write it
    "namespaces/sales/datasets/s3:%2f%2flake%2forders",         # lower-case escapes
    f"namespace=sales,dataset={ORDERS}",                        # the key, as grants are listed
])
def test_a_grant_on_a_dataset_holding_slashes_lets_the_grantee_read_it(api: TestClient, entity: str) -> None:
    """Before: the raw form was a 400 (its ``/`` read as path separators) and the encoded form
    stored ``dataset=s3:%2F%2Flake%2Forders``, which no dataset is checked on."""
    principal = f"grantee-{abs(hash(entity))}"
    given = grant(api, principal, entity)
    assert given["entity"] == f"namespace=sales,dataset={ORDERS}"
    listed = api.get(f"{V3}/grants", params={"namespace": "sales", "principal": principal})
    assert [g["entity"] for g in listed.json()] == [f"namespace=sales,dataset={ORDERS}"]
    grantee = headers_of(principal)
    assert api.get(lineage_path("sales", ORDERS), params=WINDOW, headers=grantee).status_code == 200
    refused = api.get(lineage_path("sales", OTHER), params=WINDOW, headers=grantee)
    assert refused.status_code == 403, refused.text
    revoked = api.delete(f"{V3}/grants", params={"principal": principal, "entity": entity})
    assert revoked.status_code == 200 and revoked.json()["entity"] == f"namespace=sales,dataset={ORDERS}"
    assert api.get(lineage_path("sales", ORDERS), params=WINDOW, headers=grantee).status_code == 403


def test_the_raw_and_encoded_forms_are_one_grant(api: TestClient) -> None:
    grant(api, "both-forms", f"namespaces/sales/datasets/{ORDERS}", "READ")
    grant(api, "both-forms", f"namespaces/sales/datasets/{quote(ORDERS, safe='')}", "WRITE")
    listed = api.get(f"{V3}/grants", params={"namespace": "sales", "principal": "both-forms"}).json()
    assert [(g["entity"], g["privilege"]) for g in listed] == [(f"namespace=sales,dataset={ORDERS}", "WRITE")]


def test_a_name_holding_separators_is_escaped_in_its_key_and_reaches_no_other_dataset(api: TestClient) -> None:
    given = grant(api, "tricky", "namespaces/sales/datasets/a,b=c")
    assert given["entity"] == "namespace=sales,dataset=a\\,b\\=c"
    assert api.get(lineage_path("sales", "a"), params=WINDOW, headers=headers_of("tricky")).status_code == 403


@pytest.mark.parametrize(("entity", "says"), [
    ("namespace=sales,dataset=a,b=c", "a b is checked on namespace=sales,dataset=a (in a key, a ',' or '='"),
    ("namespace=sales,dataset=", "entity key 'dataset' has an empty value"),
    ("namespace=sales,dataset=a\\", "ends with a lone backslash"),
    ("namespaces/sales/datasets/orders/field/id", "a field is checked on namespace=sales,dataset=orders (a dataset "
                                                  "whose name reads so is written with its '/' as '%2F')"),
    ("namespaces/sales/datasets/", "entity key 'dataset' has an empty value"),
    ("namespaces/sales/datasets", "entity key 'dataset' has an empty value"),
    ("namespaces//datasets/orders", "the entity is 'instance' or a path"),
    ("namespaces/sales/apps//spark/Load", "entity key 'application' has an empty value"),
    ("namespaces/sales/datasets/orders\x00", "contains a NUL character"),
    ("sales/orders", "the entity is 'instance' or a path"),
    ("", "the entity is 'instance' or a path"),
])
def test_a_hostile_entity_is_a_clear_400(api: TestClient, entity: str, says: str) -> None:
    refused = api.put(f"{V3}/grants", json={"principal": "someone", "entity": entity, "privilege": "READ"})
    assert refused.status_code == 400, refused.text
    assert says in refused.json()["message"], refused.text
    assert api.get(f"{V3}/grants", params={"principal": "someone"}).json() == []


@pytest.mark.parametrize(("entity", "key"), [
    ("namespaces/sales/datasets/s3://lake/orders", "namespace=sales,dataset=s3://lake/orders"),
    ("namespaces/sales/datasets/s3%3A%2F%2Flake%2Forders", "namespace=sales,dataset=s3://lake/orders"),
    ("namespaces/sales/datasets/file//tmp/a.csv", "namespace=sales,dataset=file//tmp/a.csv"),
    ("namespaces/sales/datasets/orders/2026/01", "namespace=sales,dataset=orders/2026/01"),
    ("namespaces/sales/datasets/hive%2Fdb%2Ftbl", "namespace=sales,dataset=hive/db/tbl"),
    ("namespaces/sales/datasets/50%25off", "namespace=sales,dataset=50%off"),
    ("namespaces/sales/streams/kafka://broker:9092/clicks", "namespace=sales,stream=kafka://broker:9092/clicks"),
    ("namespaces/sales/apps/Shop/spark/Load/", "namespace=sales,application=Shop,type=spark,program=Load"),
    ("namespace=sales,dataset=a\\,b", "namespace=sales,dataset=a\\,b"),
    ("namespaces/sales/", "namespace=sales"),
    ("instance", "instance"),
])
def test_each_way_of_naming_a_grant_gives_the_key_its_entity_is_checked_on(entity: str, key: str) -> None:
    assert grant_target(grant_subject(entity)) == key
