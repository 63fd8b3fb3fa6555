"""/api/: v1/ has one Django path per resource path of the routes, in their order; schema/ is
their OpenAPI 3.1 description and docs/ its browsable page (Swagger UI from the sidecar package,
no CDN)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from continuity.api.bundle_import import ImportView
from continuity.api.export import ExportView
from continuity.api.routes import ROUTES, Route
from continuity.api.views import OperationView


def _patterns() -> list[URLPattern]:
    by_path: dict[str, list[Route]] = {}
    for route in ROUTES:
        by_path.setdefault(route.path, []).append(route)
    return [
        path(
            route_path.replace("{", "<str:").replace("}", ">"),
            OperationView.as_view(routes=routes),
            name="api-" + route_path.replace("/", "-").replace("{", "").replace("}", ""),
        )
        for route_path, routes in by_path.items()
    ]


def no_such_path(request: HttpRequest, **_: str) -> JsonResponse:
    """Any other path under /api/v1/: the API's error body, not an HTML page."""
    error = {"code": "not_found", "message": "No such path in this API; see /api/schema/."}
    return JsonResponse({"error": error}, status=404)


class SchemaView(SpectacularAPIView):
    """The schema is public, like the routes' existence: no credential needed to read it."""

    authentication_classes: list[type] = []
    permission_classes: list[type] = []


class DocsView(SpectacularSwaggerView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []


urlpatterns: list[URLPattern | URLResolver] = [
    path("v1/export", ExportView.as_view(), name="api-export"),
    path("v1/import", ImportView.as_view(), name="api-import"),
    path("v1/", include(_patterns())),
    re_path(r"^v1/", no_such_path),
    path("schema/", SchemaView.as_view(), name="api-schema"),
    path("docs/", DocsView.as_view(url_name="api-schema"), name="api-docs"),
]
