"""What the audit commands share: a project slug (or `--security`) as the chain to work on."""

from __future__ import annotations

from django.apps import apps
from django.core.management.base import CommandError, CommandParser

from audit.chain import SECURITY_CHAIN
from audit.state import project_chains


def add_chain_arguments(parser: CommandParser, *, required: bool) -> None:
    parser.add_argument("slug", nargs=None if required else "?", help="the project's slug")
    parser.add_argument(
        "--security",
        action="store_true",
        help="the security chain (events of no project) instead of a project's",
    )


def chains_from(slug: str | None, security: bool) -> list[str] | None:
    """The chains named on the command line (a project's: its archived chains, then its live
    one); None when neither a slug nor --security was given."""
    if security:
        if slug:
            raise CommandError("give a project's slug or --security, not both")
        return [SECURITY_CHAIN]
    if not slug:
        return None
    # Looked up through the app registry: the audit app imports no other app.
    project = apps.get_model("projects", "Project").objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"no project with the slug {slug!r}")
    return project_chains(project)
