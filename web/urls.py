from django.urls import path

from web.views import audit, bundle, connections, dashboard, front_door, invitations

app_name = "web"

urlpatterns = [
    path("", front_door.front_door, name="front_door"),
    path("projects/", dashboard.project_picker, name="projects"),
    path("projects/<slug:slug>/", dashboard.project_home, name="project"),
    path("projects/<slug:slug>/tasks/<uuid:task_id>/", dashboard.task_page, name="task"),
    path(
        "projects/<slug:slug>/tasks/<uuid:task_id>/lease/release/",
        dashboard.task_lease_release_view,
        name="task_lease_release",
    ),
    path("projects/<slug:slug>/memory/", dashboard.memories_page, name="memories"),
    path("projects/<slug:slug>/memory/<uuid:memory_id>/", dashboard.memory_page, name="memory"),
    path("projects/<slug:slug>/summaries/", dashboard.summaries_page, name="summaries"),
    path("projects/<slug:slug>/summaries/<str:agent>/", dashboard.summary_page, name="summary"),
    path("projects/<slug:slug>/export.jsonl", bundle.project_export, name="project_export"),
    path("projects/<slug:slug>/keys/", connections.api_keys_page, name="api_keys"),
    path(
        "projects/<slug:slug>/keys/<uuid:key_id>/revoke/",
        connections.api_key_revoke_view,
        name="api_key_revoke",
    ),
    path("projects/<slug:slug>/invitations/", invitations.invitations_page, name="invitations"),
    path(
        "projects/<slug:slug>/invitations/<uuid:invitation_id>/sent/",
        invitations.invitation_sent,
        name="invitation_sent",
    ),
    path(
        "projects/<slug:slug>/invitations/<uuid:invitation_id>/revoke/",
        invitations.invitation_revoke_view,
        name="invitation_revoke",
    ),
    # "accept" first: the link's own route takes any token.
    path("invitations/accept/", invitations.invitation_accept_view, name="invitation_accept"),
    path("invitations/<str:token>/", invitations.open_link, name="invitation_open"),
    path("apps/", connections.apps_page, name="apps"),
    path("apps/revoke/", connections.app_revoke, name="app_revoke"),
    path("audit/", audit.audit_home, name="audit"),
    path("audit/<slug:slug>/", audit.audit_list, name="audit_list"),
    path("audit/<slug:slug>/events/<uuid:event_id>/", audit.audit_detail, name="audit_event"),
    path("audit/<slug:slug>/export.<str:kind>", audit.audit_export, name="audit_export"),
]
