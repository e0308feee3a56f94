"""dbt on the real warehouse takes the connection's libpq parameters (an Airflow connection's
extras): a statement timeout passed as ``options`` stops its build, the same build without it
passes and its result comes from run_results.json."""

from __future__ import annotations

import pytest

from lineage.errors import DbtBuildError
from lineage.settings import Settings
from warehouse.pipeline.dbt_build import build_marts


def test_the_connection_s_options_reach_dbt(warehouse_db: str) -> None:
    strict = f"{warehouse_db}?options=-c%20statement_timeout%3D1&application_name=lineage-dbt"
    # dbt runs two threads: the other thread's statement may be reported first, cancelled by dbt
    # once the first one timed out (the same build without the options passes below)
    with pytest.raises(DbtBuildError, match=r"statement timeout|canceling statement due to user request"):
        build_marts(strict, Settings.from_env(), command="run", select="+program_runs +metadata_search_terms")
    result = build_marts(f"{warehouse_db}?application_name=lineage-dbt", Settings.from_env(), command="run",
                         select="+program_runs +metadata_search_terms")
    assert result.passed >= 2 and result.warned == 0
    assert result.search_rows == 0  # then the search index, rebuilt over the same connection (nothing to index)
