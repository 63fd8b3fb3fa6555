"""Links from a task's repository reference and a receipt's commits to the repository's host.

GitHub and GitLab links follow from the bound repository's URL; any other host gets links when
its binding names URL templates (`{commit}`, `{branch}`). A repository the project does not
bind, or a host without a pattern, gets no link: the page shows the reference as text.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from projects.models import Project, ProjectRepository, Provider

# A project binds a handful of repositories; more than this are not linked, never a slow page.
BINDINGS_READ = 50

# The path of a commit and of a branch under a repository's URL, per host.
_HOST_PATHS = {
    Provider.GITHUB: ("/commit/", "/tree/"),
    Provider.GITLAB: ("/-/commit/", "/-/tree/"),
}


@dataclass(frozen=True)
class RepositoryLinks:
    """`commit_pattern` and `branch_pattern` are URLs with `{commit}` / `{branch}` in them
    (empty: no link)."""

    name: str  # owner/name
    url: str
    commit_pattern: str = ""
    branch_pattern: str = ""

    def commit(self, sha: str) -> str:
        return _fill(self.commit_pattern, "{commit}", quote(sha, safe=""))

    def branch(self, branch: str) -> str:
        return _fill(self.branch_pattern, "{branch}", quote(branch, safe="/"))


def _fill(pattern: str, placeholder: str, value: str) -> str:
    before, found, after = pattern.rpartition(placeholder)
    return f"{before}{value}{after}" if found else ""


def links_for(binding: ProjectRepository) -> RepositoryLinks:
    repository = binding.repository
    base = repository.url.rstrip("/")
    commit_path, branch_path = _HOST_PATHS.get(Provider(repository.provider), ("", ""))
    commit = f"{base}{commit_path}{{commit}}" if commit_path else ""
    branch = f"{base}{branch_path}{{branch}}" if branch_path else ""
    return RepositoryLinks(
        name=repository.full_name,
        url=repository.url,
        commit_pattern=binding.commit_url_template or commit,
        branch_pattern=binding.branch_url_template or branch,
    )


@dataclass(frozen=True)
class ProjectRepositories:
    """The project's bound repositories by name (case-insensitive, as hosts treat them)."""

    by_name: dict[str, RepositoryLinks]

    def named(self, name: str | None) -> RepositoryLinks | None:
        """The repository `name` refers to; with no name, the project's only repository."""
        if name:
            return self.by_name.get(name.lower())
        if len(self.by_name) == 1:
            return next(iter(self.by_name.values()))
        return None


def project_repositories(project: Project) -> ProjectRepositories:
    """One query."""
    bindings = (
        ProjectRepository.objects.filter(project=project)
        .select_related("repository")
        .order_by("created_at")[:BINDINGS_READ]
    )
    return ProjectRepositories({b.repository.full_name.lower(): links_for(b) for b in bindings})
