"""Who calls, and what they may do (seed 000 "Authorization for Metadata").

Every route but the health check requires an Airflow login. A FastAPI app mounted by a plugin
is not authenticated by Airflow; routes depend on Airflow's own ``get_user``, which reads
``Authorization: Bearer <jwt>`` or the UI's ``_token`` cookie (401 without, 403 for a bad
token). ``Caller`` adds the user's grants from the warehouse (``lineage.authorization``); an
Airflow admin is an instance admin.
"""

from __future__ import annotations

from typing import Annotated, Any

from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.core_api.security import get_user
from fastapi import Depends

from lineage.authorization import Access
from lineage_api import warehouse_queries
from warehouse import grant_store

CurrentUser = Annotated[BaseUser, Depends(get_user)]


def is_instance_admin(user: Any) -> bool:
    """An Airflow admin: the simple auth manager's ADMIN role, or FAB's Admin role."""
    role = getattr(user, "role", None)
    if isinstance(role, str):
        return role.upper() == "ADMIN"
    return any(getattr(r, "name", r) == "Admin" for r in getattr(user, "roles", None) or ())


def caller_access(user: CurrentUser) -> Access:
    with warehouse_queries.connection() as conn:
        return grant_store.access_for(conn, user.get_name(), is_instance_admin(user))


Caller = Annotated[Access, Depends(caller_access)]
