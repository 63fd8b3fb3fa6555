"""Repository bindings, the project itself and the read-only audit log in /admin/."""

from __future__ import annotations

import pytest
from django.test import Client

from audit.models import AuditEvent
from projects.models import Project, ProjectRepository
from tests.factories import World


@pytest.mark.django_db
class TestRepositoryBindingAdmin:
    def test_it_lets_an_admin_bind_a_repository_and_audits_it(self, world: World, client: Client):
        client.force_login(world.admin)
        response = client.post(
            "/admin/projects/projectrepository/add/",
            {
                "project": world.alpha.pk,
                "provider": "github",
                "owner": "acme",
                "name": "docs",
                "url": "https://github.com/acme/docs",
                "default_branch": "main",
                "installation_ref": "",
            },
        )
        assert response.status_code == 302, response.content
        binding = ProjectRepository.objects.get(project=world.alpha, repository__name="docs")
        event = AuditEvent.objects.get(operation="repository_bind", target_id=str(binding.pk))
        assert event.outcome == "success"

    def test_it_refuses_a_token_as_installation_reference(self, world: World, client: Client):
        client.force_login(world.owner)
        response = client.post(
            "/admin/projects/projectrepository/add/",
            {
                "project": world.alpha.pk,
                "provider": "github",
                "owner": "acme",
                "name": "secret",
                "url": "https://github.com/acme/secret",
                "default_branch": "main",
                "installation_ref": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            },
        )
        assert response.status_code == 200
        assert "installation_ref" in response.context["adminform"].form.errors
        assert not ProjectRepository.objects.filter(repository__name="secret").exists()

    def test_it_shows_only_bindings_of_managed_projects(self, world: World, client: Client):
        client.force_login(world.owner)
        response = client.get("/admin/projects/projectrepository/")
        projects = {b.project.slug for b in response.context["cl"].result_list}
        assert projects == {"alpha"}

    def test_it_lets_an_owner_unbind_and_audits_it(self, world: World, client: Client):
        binding = ProjectRepository.objects.get(project=world.alpha)
        client.force_login(world.owner)
        response = client.post(
            f"/admin/projects/projectrepository/{binding.pk}/delete/", {"post": "yes"}
        )
        assert response.status_code == 302
        assert not ProjectRepository.objects.filter(pk=binding.pk).exists()
        assert AuditEvent.objects.get(operation="repository_unbind").outcome == "success"


@pytest.mark.django_db
class TestProjectAdmin:
    def test_it_lets_the_owner_rename_the_project(self, world: World, client: Client):
        client.force_login(world.owner)
        response = client.post(f"/admin/projects/project/{world.alpha.pk}/change/", {"name": "A2"})
        assert response.status_code == 302
        assert Project.objects.get(pk=world.alpha.pk).name == "A2"
        assert AuditEvent.objects.get(operation="project_rename").outcome == "success"

    def test_it_does_not_let_an_admin_rename_the_project(self, world: World, client: Client):
        client.force_login(world.admin)
        response = client.post(f"/admin/projects/project/{world.alpha.pk}/change/", {"name": "X"})
        assert response.status_code == 403
        assert Project.objects.get(pk=world.alpha.pk).name == "Alpha"


@pytest.mark.django_db
class TestAuditAdmin:
    def test_it_shows_owners_only_their_projects_events(self, world: World, client: Client):
        client.force_login(world.owner)
        response = client.get("/admin/audit/auditevent/")
        assert response.status_code == 200
        slugs = {e.project_slug_shown for e in response.context["cl"].result_list if e.project_id}
        assert slugs == {"alpha"}

    def test_it_keeps_audit_rows_read_only_even_for_superusers(self, world: World, client: Client):
        from tests.factories import make_user

        root = make_user("root", is_superuser=True, is_staff=True)
        event = AuditEvent.objects.filter(project_id=world.alpha.pk).first()
        assert event is not None
        client.force_login(root)
        url = f"/admin/audit/auditevent/{event.pk}/change/"
        assert client.get(url).status_code == 200  # viewable
        client.post(url, {"operation": "tampered"})
        assert AuditEvent.objects.get(pk=event.pk).operation == event.operation
        assert client.post(f"/admin/audit/auditevent/{event.pk}/delete/").status_code == 403
        assert client.get("/admin/audit/auditevent/add/").status_code == 403

    def test_it_refuses_updates_and_deletes_in_the_model_layer(self, world: World):
        event = AuditEvent.objects.filter(project_id=world.alpha.pk).first()
        assert event is not None
        with pytest.raises(TypeError):
            AuditEvent.objects.filter(pk=event.pk).update(operation="x")
        with pytest.raises(TypeError):
            AuditEvent.objects.filter(pk=event.pk).delete()
        with pytest.raises(TypeError):
            event.save()
        with pytest.raises(TypeError):
            event.delete()


@pytest.mark.django_db
class TestAuditAdminFilters:
    """The admin's audit list filters with the audit log's own filters (audit.filters)."""

    def test_it_filters_by_the_audit_logs_filters(self, world: World, client: Client):
        client.force_login(world.owner)
        alpha = AuditEvent.objects.filter(project_id=world.alpha.pk)
        operation = alpha.values_list("operation", flat=True).first()
        assert operation is not None
        response = client.get("/admin/audit/auditevent/", {"operation": operation})
        assert response.status_code == 200
        shown = {event.pk for event in response.context["cl"].result_list}
        assert shown == set(alpha.filter(operation=operation).values_list("pk", flat=True))
        assert response.context["cl"].has_active_filters
        query = {"operation": operation, "_facets": "1"}
        with_counts = client.get("/admin/audit/auditevent/", query)
        assert with_counts.status_code == 200

    def test_it_filters_by_actor_and_keeps_the_search(self, world: World, client: Client):
        client.force_login(world.owner)
        event = AuditEvent.objects.filter(project_id=world.alpha.pk).exclude(actor_label="")[0]
        query = {"actor": event.actor_label, "q": event.operation}
        response = client.get("/admin/audit/auditevent/", query)
        assert response.status_code == 200
        shown = list(response.context["cl"].result_list)
        assert event in shown
        assert {(e.actor_label, e.operation) for e in shown} == {
            (event.actor_label, event.operation)
        }
        # The search stays in the filter form, as a hidden field.
        assert f'name="q" value="{event.operation}"'.encode() in response.content

    def test_it_shows_a_bad_value_as_the_forms_error(self, world: World, client: Client):
        client.force_login(world.owner)
        query = {"since": "2026-02-02T00:00", "until": "2026-01-01T00:00"}
        response = client.get("/admin/audit/auditevent/", query)
        assert response.status_code == 200
        assert b"Must be later than the start." in response.content
