from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness only: no authentication, no data, no database query."""
    return JsonResponse({"status": "ok"})
