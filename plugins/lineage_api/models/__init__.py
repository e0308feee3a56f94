"""The API's request and response bodies, one module per route group, so ``/lineage/openapi.json`` describes what routes
take and answer. Routes still return what the core and the stores build; these models check
and document it at the boundary.

Request bodies validate with the core's own checks (``lineage.model.metadata_values``,
``lineage.model.namespaces``), so a bad body is a 400 naming the rule it breaks. Parts whose shape
the core owns and documents (a field path's operations, a view's drawing) are typed as JSON
objects here.
"""
