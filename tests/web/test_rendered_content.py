"""What agents wrote, as people read it: Markdown rendered through an allowlist (no raw HTML, no
javascript: links, rel="nofollow noopener" on every link), commits and branches linked to the
bound repository's host, test outcomes marked by word and colour, and supersession by title."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from continuity.services import memory_add, task_create, task_update
from projects.callers import operator_caller
from projects.models import ProjectRepository
from projects.services import repository_bind
from tests.continuity.helpers import as_json
from tests.factories import World, wc
from web.markdown import clean, plain_text, render_markdown

HOSTILE = (
    "# Plan\n\n**bold** <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n"
    "[click](javascript:alert(3)) [data](data:text/html;base64,PHNjcmlwdD4=) "
    "[ok](https://example.com/a) <a href='https://evil.example'>raw</a>\n\n"
    "![pixel](https://tracker.example/p.png)"
)


def test_it_renders_markdown_and_lets_no_raw_html_or_script_link_through():
    html = render_markdown(HOSTILE)
    assert "<h3>Plan</h3>" in html  # a "#" heading sits below the page's h1 and h2
    assert "<strong>bold</strong>" in html
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # raw HTML shows as text
    assert "javascript:" not in re.sub(r">[^<]*<", "><", html)  # in no attribute
    assert 'href="data:' not in html
    assert "evil.example" not in re.findall(r'href="([^"]*)"', html)
    assert '<a href="https://example.com/a" rel="nofollow noopener">ok</a>' in html
    # No image is loaded (the pages load nothing from elsewhere): it shows as a link.
    assert 'href="https://tracker.example/p.png" rel="nofollow noopener">pixel</a>' in html
    for href_tag in re.findall(r"<a [^>]*>", html):
        assert 'rel="nofollow noopener"' in href_tag


def test_the_allowlist_holds_on_its_own_whatever_the_renderer_lets_through():
    cleaned = clean(
        '<p onclick="steal()">a</p><script>b()</script><iframe src="https://x"></iframe>'
        '<a href="javascript:c()">c</a><a href="https://ok.example" target="_blank">d</a>'
        '<img src="https://t.example/p.png"><h1>big</h1><style>*{}</style>'
    )
    assert cleaned == (
        '<p>a</p><a rel="nofollow noopener">c</a>'
        '<a href="https://ok.example" rel="nofollow noopener">d</a>big'
    )


def test_it_keeps_only_the_words_for_previews():
    assert (
        plain_text("## Goal\n\n**Ship** the `web` UI <b>now</b>")
        == "Goal Ship the web UI <b>now</b>"
    )


def test_the_task_page_renders_the_description_notes_and_receipts(world: World, client: Client):
    carla = world.caller("contributor")
    task = as_json(
        task_create(
            carla, write_context=wc(carla), title="Render it", description=HOSTILE, next_step="*Go*"
        )
    )
    task_update(
        carla,
        write_context=wc(carla),
        task_id=task["id"],
        expected_version=1,
        status="in_progress",
        handoff_note="- first\n- second",
        work_receipt={
            "session_ref": "s-1",
            "summary": "Did **two** things",
            "tests": [
                {"name": "pytest tests/a", "result": "passed"},
                {"name": "pytest tests/b", "result": "failed"},
                {"name": "pytest tests/c", "result": "skipped"},
            ],
        },
    )
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/tasks/{task['id']}/").content.decode()
    assert "<h3>Plan</h3>" in html
    assert "<script>alert" not in html
    assert "<li>first</li>" in html
    assert "<em>Go</em>" in html
    assert "Did <strong>two</strong> things" in html
    # Pass and fail differ in words, symbol and class (colour): never colour alone.
    assert '<span class="badge test-passed">✓ passed</span> <code>pytest tests/a</code>' in html
    assert '<span class="badge test-failed">✗ failed</span> <code>pytest tests/b</code>' in html
    assert '<span class="badge test-skipped">- skipped</span>' in html
    assert '<span class="badge status-in_progress">in progress</span>' in html


def test_memories_and_summaries_render_their_markdown(world: World, client: Client):
    carla = world.caller("contributor")
    memory = as_json(
        memory_add(
            carla,
            write_context=wc(carla),
            kind="decision",
            title="Markdown",
            content="Use **one** renderer.\n\n1. parse\n2. clean",
            rationale="*Safety* first",
            source="review",
        )
    )
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/memory/{memory['id']}/").content.decode()
    assert "Use <strong>one</strong> renderer." in html
    assert "<li>parse</li>" in html
    assert "<em>Safety</em> first" in html
    listing = client.get("/projects/alpha/memory/").content.decode()
    assert "Use one renderer. parse clean" in listing  # the preview: words only
    assert "**one**" not in listing


def test_commits_and_branches_link_to_github_and_gitlab(world: World, client: Client):
    repository_bind(
        operator_caller(world.alpha),
        provider="gitlab",
        owner="acme",
        name="infra",
        url="https://gitlab.example.com/acme/infra",
    )
    carla = world.caller("contributor")
    task = as_json(
        task_create(
            carla,
            write_context=wc(carla),
            title="On GitLab",
            description="d",
            repository_ref={
                "repository": "acme/infra",
                "branch": "feature/x",
                "commit": "a1b2c3d4e5f6a7",
            },
        )
    )
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/tasks/{task['id']}/").content.decode()
    assert '<a href="https://gitlab.example.com/acme/infra"><code>acme/infra</code></a>' in html
    assert 'href="https://gitlab.example.com/acme/infra/-/tree/feature/x"' in html
    assert 'href="https://gitlab.example.com/acme/infra/-/commit/a1b2c3d4e5f6a7"' in html


def test_a_binding_names_url_templates_for_any_other_host(world: World, client: Client):
    binding = repository_bind(
        operator_caller(world.alpha),
        provider="other",
        owner="acme",
        name="tools",
        url="https://git.example.org/acme/tools",
        commit_url_template="https://git.example.org/acme/tools/commit/?id={commit}",
        branch_url_template="https://git.example.org/acme/tools/log/?h={branch}",
    )
    assert ProjectRepository.objects.get(pk=binding.pk).commit_url_template.endswith("{commit}")
    carla = world.caller("contributor")
    task = as_json(
        task_create(
            carla,
            write_context=wc(carla),
            title="Elsewhere",
            description="d",
            repository_ref={"repository": "acme/tools", "branch": "main"},
        )
    )
    task_update(
        carla,
        write_context=wc(carla),
        task_id=task["id"],
        expected_version=1,
        work_receipt={"session_ref": "s", "summary": "x", "commits": ["0123abcd4567ef"]},
    )
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/tasks/{task['id']}/").content.decode()
    assert 'href="https://git.example.org/acme/tools/log/?h=main"' in html
    assert 'href="https://git.example.org/acme/tools/commit/?id=0123abcd4567ef"' in html


@pytest.mark.parametrize(
    "template",
    [
        "javascript:alert({commit})",
        "https://git.example.org/commit/",  # no placeholder
        "https://git.example.org/{commit}/{other}",
        "https://user:pw@git.example.org/{commit}",
    ],
)
def test_it_refuses_a_url_template_that_is_not_a_web_address_with_its_placeholder(
    world: World, template: str
):
    from core.errors import ValidationError

    with pytest.raises(ValidationError) as refused:
        repository_bind(
            operator_caller(world.alpha),
            provider="other",
            owner="acme",
            name="bad",
            url="https://git.example.org/acme/bad",
            commit_url_template=template,
        )
    assert "commit_url_template" in refused.value.fields


def test_an_unbound_repository_is_shown_without_a_link(world: World, client: Client):
    ProjectRepository.objects.filter(project=world.alpha).delete()
    carla = world.caller("contributor")
    task = as_json(task_create(carla, write_context=wc(carla), title="Plain", description="d"))
    task_update(
        carla,
        write_context=wc(carla),
        task_id=task["id"],
        expected_version=1,
        work_receipt={"session_ref": "s", "summary": "x", "commits": ["abcdef0123456"]},
    )
    client.force_login(world.viewer)
    html = client.get(f"/projects/alpha/tasks/{task['id']}/").content.decode()
    assert '<code title="abcdef0123456">abcdef012345</code>' in html
    assert "/commit/" not in html


def test_the_admins_binding_form_names_the_link_templates(world: World, client: Client):
    client.force_login(world.admin)
    form = client.get("/admin/projects/projectrepository/add/").content.decode()
    assert 'name="commit_url_template"' in form
    assert 'name="branch_url_template"' in form
    fields = {
        "project": world.alpha.pk,
        "provider": "other",
        "owner": "acme",
        "name": "gitea",
        "url": "https://git.example.net/acme/gitea",
        "default_branch": "main",
        "installation_ref": "",
        "commit_url_template": "https://git.example.net/acme/gitea/commit/{commit}",
        "branch_url_template": "https://git.example.net/acme/gitea/src/branch/{branch}",
    }
    response = client.post("/admin/projects/projectrepository/add/", fields)
    assert response.status_code == 302, response.content
    binding = ProjectRepository.objects.get(project=world.alpha, repository__name="gitea")
    assert binding.commit_url_template == fields["commit_url_template"]
    assert binding.branch_url_template == fields["branch_url_template"]
    refused = client.post(
        "/admin/projects/projectrepository/add/",
        {**fields, "name": "other", "commit_url_template": "https://git.example.net/no-slot"},
    )
    assert refused.status_code == 200
    assert "commit_url_template" in refused.context["adminform"].form.errors
