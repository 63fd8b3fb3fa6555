"""project_import --from beads|claude-code-tasks|markdown: a dry run by default that prints the
mapping and what cannot be mapped; --apply writes it as a new project, in one transaction."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditEvent
from continuity.models import Memory, Task, TaskDependency
from projects.models import Project
from tests.factories import World

pytestmark = pytest.mark.django_db
SAMPLES = Path(__file__).parent / "samples"
BEADS = SAMPLES / "beads" / "issues.jsonl"
CLAUDE = SAMPLES / "claude-code-tasks" / "4f1c2a9e-list"
MARKDOWN = SAMPLES / "markdown"


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("project_import", *args, stdout=out)
    return out.getvalue()


def _dependencies(project: Project) -> set[tuple[str, str]]:
    rows = TaskDependency.objects.filter(project=project)
    return set(rows.values_list("task__title", "blocked_by__title"))


def test_a_dry_run_prints_the_mapping_and_imports_nothing(world: World) -> None:
    output = _run(str(BEADS), "--from", "beads", "--slug", "from-beads")
    assert "From beads: 4 tasks, 1 memories" in output
    assert "hq-3b4 -> task in_progress: Write the importer" in output
    assert "cannot map: hq-9e0 (Someday: a web importer): status 'deferred'" in output
    assert "cannot map: hq-3b4 discovered-from hq-1a2: only blocks dependencies" in output
    assert "Dry run: nothing was imported" in output
    assert not Project.objects.filter(slug="from-beads").exists()


def test_beads_issues_become_tasks_with_their_dependencies_and_comments_notes(
    world: World,
) -> None:
    output = _run(
        str(BEADS), "--from", "beads", "--slug", "from-beads", "--owner", "olivia", "--apply"
    )
    assert "Imported into project from-beads" in output
    project = Project.objects.get(slug="from-beads")
    tasks = {task.title: task for task in Task.objects.filter(project=project)}
    assert {title: task.status for title, task in tasks.items()} == {
        "Design the export bundle": "done",
        "Write the importer": "in_progress",
        "Benchmark a million rows": "todo",
        "Ask the hosting team": "blocked",
    }
    assert "priority P1" in tasks["Design the export bundle"].description
    assert "Closed because: Merged" in tasks["Design the export bundle"].description
    assert tasks["Write the importer"].updated_at.isoformat() == "2026-04-20T08:30:00.123456+00:00"
    assert _dependencies(project) == {
        ("Write the importer", "Design the export bundle"),
        ("Benchmark a million rows", "Write the importer"),
    }
    note = Memory.objects.get(project=project)
    assert note.kind == "note"
    assert "Sorted keys, please." in note.content
    assert str(tasks["Design the export bundle"].pk) in note.content
    assert note.author == "adam"
    event = AuditEvent.objects.get(project_id=project.pk, operation="project_import")
    assert event.target_type == "beads"
    assert event.target_id.startswith("sha256:")


def test_claude_code_tasks_keep_status_owner_and_blocked_by(world: World) -> None:
    output = _run(
        str(CLAUDE),
        "--from",
        "claude-code-tasks",
        "--slug",
        "from-claude",
        "--owner",
        "olivia",
        "--apply",
    )
    assert "cannot map: 4.json (An abandoned idea): status 'deleted'" in output
    assert "cannot map: 3 blocked by 9: no such task" in output
    project = Project.objects.get(slug="from-claude")
    statuses = dict(Task.objects.filter(project=project).values_list("title", "status"))
    assert statuses == {
        "Read the beads format": "done",
        "Map issues to tasks": "in_progress",
        "Test the importer": "todo",
    }
    mapping = Task.objects.get(project=project, title="Map issues to tasks")
    assert "owner researcher" in mapping.description
    assert _dependencies(project) == {
        ("Map issues to tasks", "Read the beads format"),
        ("Test the importer", "Map issues to tasks"),
    }


def test_markdown_notes_and_decisions_from_front_matter(world: World) -> None:
    output = _run(
        str(MARKDOWN), "--from", "markdown", "--slug", "from-notes", "--owner", "olivia", "--apply"
    )
    assert "cannot map: decisions/half-decided.md: a decision needs rationale and source" in output
    assert "cannot map: scratch.md: no front matter" in output
    project = Project.objects.get(slug="from-notes")
    memories = {m.title: m for m in Memory.objects.filter(project=project)}
    assert set(memories) == {"The export format", "Ids are kept on import"}
    decision = memories["Ids are kept on import"]
    assert (decision.kind, decision.source) == ("decision", "issue 24")
    assert decision.rationale == "The audit chain's digests cover the ids."
    note = memories["The export format"]
    assert note.kind == "note"
    assert note.content.startswith("Tags: export, format\n\n# The export format")
    assert note.created_at.date().isoformat() == "2026-04-18"


def test_apply_needs_an_owner_and_a_free_slug_and_leaves_nothing_when_refused(
    world: World,
) -> None:
    with pytest.raises(CommandError, match="--owner USERNAME"):
        _run(str(BEADS), "--from", "beads", "--slug", "x", "--apply")
    with pytest.raises(CommandError, match="a project alpha exists already"):
        _run(str(BEADS), "--from", "beads", "--slug", "alpha", "--owner", "olivia", "--apply")
    with pytest.raises(CommandError, match="no such user here"):
        _run(str(BEADS), "--from", "beads", "--slug", "y", "--owner", "nobody", "--apply")
    assert not Project.objects.filter(slug__in=["x", "y"]).exists()
