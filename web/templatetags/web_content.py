"""How the pages show what agents wrote: Markdown rendered and cleaned (web.markdown), plain
previews, badges that differ by text and colour alike, and links to the repository's host."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from continuity.outputs import RepositoryRefOut, TaskOut
from continuity.presenters import repository_ref_out
from web.markdown import plain_text, render_markdown
from web.repository_links import ProjectRepositories, RepositoryLinks

register = template.Library()

# Each badge's words: never colour alone (the CSS gives each kind its colour too).
BADGES: dict[str, dict[str, str]] = {
    "status": {
        "todo": "to do",
        "in_progress": "in progress",
        "blocked": "blocked",
        "done": "done",
        "cancelled": "cancelled",
    },
    "test": {
        "passed": "✓ passed",
        "failed": "✗ failed",
        "skipped": "- skipped",
        "error": "! error",
    },
    "outcome": {
        "success": "success",
        "replayed": "replayed",
        "rejected": "rejected",
        "error": "error",
    },
    "key": {"active": "active", "revoked": "revoked", "expired": "expired"},
}
SHORT_COMMIT = 12


@register.filter
def markdown(text: str | None) -> SafeString:
    """Markdown as cleaned HTML (web.markdown's allowlist), its headings from h3 down."""
    return mark_safe(render_markdown(text or ""))  # noqa: S308 - nh3 cleaned it


@register.filter
def plain(text: str | None, chars: int = 200) -> str:
    """The words of Markdown `text` on one line, at most `chars` characters: cut after a whole
    word (never inside one), and then ending in "…"."""
    words = plain_text(text or "")
    if words.endswith("…") and " " in words:  # already cut (a selector's preview): maybe inside
        words = words[:-1].rsplit(" ", 1)[0].rstrip(" ,.;:") + "…"  # a word, so drop that one
    return clip(words, chars)


@register.filter
def clip(words: str | None, chars: int = 200) -> str:
    """`words`, at most `chars` characters, cut after a whole word and then ending in "…"
    (Django's truncatechars cuts inside a word)."""
    words = words or ""
    limit = int(chars)
    if len(words) <= limit:
        return words
    cut = words[: limit - 1]
    if not words[limit - 1].isspace() and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"


@register.simple_tag
def badge(kind: str, value: str) -> SafeString:
    words = BADGES.get(kind, {}).get(value, str(value).replace("_", " "))
    return format_html('<span class="badge {}-{}">{}</span>', kind, value, words)


@register.simple_tag
def repository_ref(
    ref: RepositoryRefOut | dict[str, Any] | None, repositories: ProjectRepositories
) -> SafeString:
    """`owner/name on branch at commit`, each linked to the host when the project binds the
    repository and the host has a pattern. `ref` is as a task stores it, or as task_get
    returns it."""
    if isinstance(ref, dict):
        ref = repository_ref_out(ref) if ref else None
    if ref is None:
        return format_html("{}", "—")
    links = repositories.named(ref.repository)
    parts = [_linked(ref.repository, links.url if links else "")]
    if ref.branch:
        parts.append(format_html(" on {}", _linked(ref.branch, _branch(links, ref.branch))))
    if ref.commit:
        parts.append(format_html(" at {}", commit(ref.commit, links)))
    return format_html_join("", "{}", ((part,) for part in parts))


@register.simple_tag
def commit(sha: str, links: RepositoryLinks | None) -> SafeString:
    """A commit's first 12 characters (all of it in the title), linked to its host page."""
    url = links.commit(sha) if links else ""
    short = sha[:SHORT_COMMIT]
    if url:
        return format_html('<a href="{}" title="{}"><code>{}</code></a>', url, sha, short)
    return format_html('<code title="{}">{}</code>', sha, short)


@register.simple_tag
def receipt_repository(task: TaskOut, repositories: ProjectRepositories) -> RepositoryLinks | None:
    """Where a task's receipts' commits live: its repository reference's, else the project's
    only repository."""
    ref = task.repository_ref
    return repositories.named(ref.repository if ref else None)


def _branch(links: RepositoryLinks | None, branch: str) -> str:
    return links.branch(branch) if links else ""


def _linked(text: str, url: str) -> SafeString:
    if url:
        return format_html('<a href="{}"><code>{}</code></a>', url, text)
    return format_html("<code>{}</code>", text)


@register.filter
def get(mapping: dict[str, Any], key: str) -> Any:
    """`mapping[key]`, or None: a dict looked up by a value the template holds."""
    return mapping.get(str(key))
