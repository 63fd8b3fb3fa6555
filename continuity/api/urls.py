"""/api/v1/: one Django path per resource path of the routes, in their order."""

from __future__ import annotations

from django.urls import URLPattern, path

from continuity.api.routes import ROUTES, Route
from continuity.api.views import operation_view


def _patterns() -> list[URLPattern]:
    by_path: dict[str, list[Route]] = {}
    for route in ROUTES:
        by_path.setdefault(route.path, []).append(route)
    return [
        path(
            route_path.replace("{", "<str:").replace("}", ">"),
            operation_view(routes).as_view(),
            name="api-" + route_path.replace("/", "-").replace("{", "").replace("}", ""),
        )
        for route_path, routes in by_path.items()
    ]


urlpatterns = _patterns()
