from django.urls import path

from web.views import audit, connections, dashboard, front_door

app_name = "web"

urlpatterns = [
    path("", front_door.front_door, name="front_door"),
    path("projects/", dashboard.project_picker, name="projects"),
    path("projects/<slug:slug>/", dashboard.project_home, name="project"),
    path("projects/<slug:slug>/tasks/<uuid:task_id>/", dashboard.task_page, name="task"),
    path("projects/<slug:slug>/memory/", dashboard.memories_page, name="memories"),
    path("projects/<slug:slug>/memory/<uuid:memory_id>/", dashboard.memory_page, name="memory"),
    path("projects/<slug:slug>/summaries/", dashboard.summaries_page, name="summaries"),
    path("projects/<slug:slug>/summaries/<str:agent>/", dashboard.summary_page, name="summary"),
    path("projects/<slug:slug>/keys/", connections.api_keys_page, name="api_keys"),
    path(
        "projects/<slug:slug>/keys/<uuid:key_id>/revoke/",
        connections.api_key_revoke_view,
        name="api_key_revoke",
    ),
    path("apps/", connections.apps_page, name="apps"),
    path("apps/revoke/", connections.app_revoke, name="app_revoke"),
    path("audit/", audit.audit_home, name="audit"),
    path("audit/<slug:slug>/", audit.audit_list, name="audit_list"),
    path("audit/<slug:slug>/events/<uuid:event_id>/", audit.audit_detail, name="audit_event"),
    path("audit/<slug:slug>/export.<str:kind>", audit.audit_export, name="audit_export"),
]
