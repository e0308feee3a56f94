"""Every route but the health check requires an Airflow login.

A FastAPI app mounted by a plugin is not authenticated by Airflow; routes depend on Airflow's
own ``get_user``, which reads ``Authorization: Bearer <jwt>`` or the UI's ``_token`` cookie
(401 without, 403 for a bad token).
"""

from __future__ import annotations

from typing import Annotated

from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.core_api.security import get_user
from fastapi import Depends

CurrentUser = Annotated[BaseUser, Depends(get_user)]
