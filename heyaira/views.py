from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from core.database import database_answers

# Readiness answers within this long, whatever the database does.
READINESS_TIMEOUT_SECONDS = 2.0
RETRY_AFTER_SECONDS = 5


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness only: no authentication, no data, no database query."""
    return JsonResponse({"status": "ok"})


@require_GET
async def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers a query in bounded time. No authentication, no data.

    Async, and run on the database executor: a database that hangs holds one of its threads
    for at most the pool timeout, never the request past READINESS_TIMEOUT_SECONDS.
    """
    if await database_answers(READINESS_TIMEOUT_SECONDS):
        return JsonResponse({"status": "ready"})
    response = JsonResponse({"status": "unavailable"}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
