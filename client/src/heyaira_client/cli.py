"""The `heyaira` command. Every command that writes checks server_identity against the profile
first and refuses on any difference; see `heyaira --help`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from heyaira_client import hooks, installers
from heyaira_client.errors import (
    HeyAiraClientError,
    LostResponse,
    ProfileError,
    find_client_error,
)
from heyaira_client.failures import describe
from heyaira_client.leases import LeaseBook, lease_length, renew_due
from heyaira_client.models import Identity
from heyaira_client.profile import Profile, load_profile, save_profile

# The MCP SDK (most of a command's start-up time) is loaded only by commands that connect: a
# hook with nothing to send, `hooks install` or `profile add` starts in a fraction of the time.
if TYPE_CHECKING:
    from heyaira_client.session import HeyAira

SESSION_REF_VARIABLE = hooks.SESSION_REF_VARIABLE


def _emit(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


def _run(profile: Profile, work: Callable[[HeyAira], Awaitable[Any]]) -> Any:
    from heyaira_client.session import HeyAira

    async def body() -> Any:
        async with HeyAira(profile) as heyaira:
            return await work(heyaira)

    return anyio.run(body)


def _identity_line(identity: Identity) -> str:
    p = identity.principal
    return (
        f"{p.actor} as {p.role} of {identity.project.name} ({identity.project.slug}) on "
        f"{identity.resource}, instance {identity.instance} [{p.credential}; "
        f"{', '.join(p.scopes)}]"
    )


# --- commands -----------------------------------------------------------------------------------


def cmd_profile_add(options: argparse.Namespace) -> None:
    profile = Profile(
        name=options.name,
        url=options.url,
        resource=options.resource or "",
        instance=options.instance,
        project=options.project,
        credential=options.credential,
        agent=options.agent,
        mode=options.mode,
        summarizer=tuple(shlex.split(options.summarizer)) if options.summarizer else (),
    )
    path = save_profile(profile, make_default=options.default)
    print(f"profile {profile.name} saved in {path}")


def cmd_login(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    if profile.credential != "oauth":
        raise ProfileError(f"profile {profile.name} uses {profile.credential}, not oauth")
    from heyaira_client.oauth import login_provider, loopback_listener, open_in_browser, print_only
    from heyaira_client.session import HeyAira
    from heyaira_client.tokens import FileTokenStorage

    open_url = print_only if options.no_browser else open_in_browser

    async def body() -> Identity:
        with loopback_listener(options.port) as callback:
            provider = login_provider(profile, callback, open_url, options.timeout)
            async with HeyAira(profile, auth=provider) as heyaira:
                identity = await heyaira.verify()
            FileTokenStorage(profile.name, profile.resource).save_metadata(provider)
            return identity

    try:
        identity = anyio.run(body)
    except BaseException:
        FileTokenStorage(profile.name, profile.resource).forget()  # no tokens for a wrong server
        raise
    print(f"logged in: {_identity_line(identity)}")


def cmd_whoami(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    identity = _run(profile, lambda h: h.verify())
    if options.json:
        _emit({"profile": profile.name, "verified": True, "identity": identity.raw})
        return
    print(_identity_line(identity))
    print(f"profile {profile.name}: resource, instance and project match")


def cmd_context(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    if options.json:
        recovery = _run(profile, lambda h: h.recover(agent=options.agent))
        _emit({"identity": recovery.identity.raw, "context": recovery.context.raw})
    else:
        # The server's brief (its `resume` prompt), the text the session hooks inject.
        sys.stdout.write(_run(profile, lambda h: h.resume_brief()))


def cmd_tasks(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        return await heyaira.task_list(status=options.status, limit=options.limit)

    tasks = _run(profile, work)
    if options.json:
        _emit([t.raw for t in tasks])
        return
    for task in tasks:
        print(f"{task.id}  v{task.version}  {task.status:<11}  {task.title}")
        if task.next_step:
            print(f"{'':38}next: {task.next_step}")


async def _current_version(heyaira: HeyAira, task_id: str, given: int | None) -> int:
    return given if given is not None else await heyaira.task_version(task_id)


def _session_ref(options: argparse.Namespace) -> str | None:
    return getattr(options, "session_ref", None) or os.environ.get(SESSION_REF_VARIABLE) or None


def cmd_claim(options: argparse.Namespace) -> None:
    """Claim a task with a lease: the next one (--next), or TASK_ID. Without a session_ref
    (--session-ref, HEYAIRA_SESSION_REF) the lease is the actor's, for any of its sessions."""
    profile = load_profile(options.profile)
    session_ref = _session_ref(options)
    if options.next and options.task_id:
        raise ProfileError("give TASK_ID or --next, not both")
    if options.next and not session_ref:
        raise ProfileError(f"claim --next needs --session-ref or {SESSION_REF_VARIABLE}")

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        if options.next:
            assert session_ref is not None
            return await heyaira.task_claim_next(
                session_ref=session_ref, lease_seconds=options.lease_seconds
            )
        if not options.task_id:
            raise ProfileError("give TASK_ID, or --next for the next task")
        version = await _current_version(heyaira, options.task_id, options.version)
        update = await heyaira.task_update(
            options.task_id,
            expected_version=version,
            status="in_progress",
            next_step=options.next_step,
            session_ref=session_ref,
            lease_seconds=options.lease_seconds,
        )
        return update.task

    task = _run(profile, work)
    if task is None:
        print("nothing to claim: no ready task, and no lease has expired")
        return
    lease = task.raw.get("lease") or {}
    if session_ref:
        LeaseBook().record(profile.name, session_ref, task.id, lease_length(lease))
    print(
        f"claimed {task.id}: {task.status}, version {task.version}, "
        f"lease until {lease.get('expires_at', '?')}"
    )


def cmd_heartbeat(options: argparse.Namespace) -> None:
    """Renew this session's leases: TASK_ID's, or every one `claim` recorded (--if-due: only
    those a third through)."""
    profile = load_profile(options.profile)
    session_ref = _session_ref(options)
    if not session_ref:
        raise ProfileError(f"give --session-ref or set {SESSION_REF_VARIABLE}")
    book = LeaseBook()
    if options.if_due and not options.task_id and not book.due(profile.name, session_ref):
        return  # nothing a third through: no connection at all

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        if options.task_id:
            return await heyaira.task_heartbeat(options.task_id, session_ref=session_ref)
        return await renew_due(heyaira, book, profile.name, session_ref, force=not options.if_due)

    done = _run(profile, work)
    if options.task_id:
        print(f"renewed {options.task_id}: lease until {done['lease']['expires_at']}")
        return
    for task_id in done.renewed:
        print(f"renewed {task_id}")
    for task_id in done.lost:
        print(f"lost {task_id}: taken over or released; stop working on it", file=sys.stderr)


def _test_runs(values: Sequence[str]) -> list[dict[str, str]]:
    runs = []
    for value in values:
        name, _, result = value.rpartition("=")
        if not name or result not in ("passed", "failed", "skipped", "error"):
            raise ProfileError(f"--test takes NAME=passed|failed|skipped|error, not {value!r}")
        runs.append({"name": name, "result": result})
    return runs


def cmd_handoff(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    session_ref = options.session_ref or os.environ.get(SESSION_REF_VARIABLE)
    if not session_ref:
        raise ProfileError(f"give --session-ref or set {SESSION_REF_VARIABLE}")
    receipt: dict[str, Any] = {"session_ref": session_ref, "summary": options.summary}
    if options.test:
        receipt["tests"] = _test_runs(options.test)
    if options.commit:
        receipt["commits"] = options.commit
    if options.next_step:
        receipt["next_step"] = options.next_step

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        version = await _current_version(heyaira, options.task_id, options.version)
        return await heyaira.task_update(
            options.task_id,
            expected_version=version,
            status=options.status,
            next_step=options.next_step,
            handoff_note=options.note,
            work_receipt=receipt,
        )

    update = _run(profile, work)
    if update.task.status != "in_progress":
        # Its lease ended with the move: the hooks have nothing more to renew.
        LeaseBook().forget(profile.name, session_ref, update.task.id)
    receipt_id = update.receipt.id if update.receipt else "none"
    recovered = " (answer lost; read back)" if update.recovered else ""
    print(
        f"handed over {update.task.id}: {update.task.status}, version {update.task.version}, "
        f"receipt {receipt_id}{recovered}"
    )


def _written(kind: str, written: Any) -> None:
    again = " (an earlier attempt's key, replayed)" if written.replayed else ""
    print(f"{kind} {written.id}{again}")


def cmd_note(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        return await heyaira.note(options.text, title=options.title)

    _written("note", _run(profile, work))


def cmd_decide(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)

    async def work(heyaira: HeyAira) -> Any:
        await heyaira.verify()
        return await heyaira.decide(
            options.title,
            options.content,
            rationale=options.rationale,
            source=options.source,
            supersedes=options.supersedes,
        )

    _written("decision", _run(profile, work))


def _hook_input() -> dict[str, Any]:
    """The event's JSON on stdin; anything else counts as no input (a hook never fails on it)."""
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}


def cmd_export(options: argparse.Namespace) -> None:
    from heyaira_client.bundle import export_bundle

    profile = load_profile(options.profile)
    _run(profile, lambda h: h.verify())  # the profile's server, instance and project, first
    if options.output:
        with open(options.output, "wb") as out:
            written = export_bundle(profile, out)
        print(f"wrote {written} bytes to {options.output}", file=sys.stderr)
    else:
        export_bundle(profile, sys.stdout.buffer)
        sys.stdout.flush()


def cmd_import(options: argparse.Namespace) -> None:
    from heyaira_client.bundle import import_bundle

    profile = load_profile(options.profile)
    _run(profile, lambda h: h.verify())  # the profile's server, instance and project, first
    try:
        bundle = open(options.file, "rb")  # noqa: SIM115 (closed below, after the upload)
    except OSError as error:
        raise HeyAiraClientError(f"cannot read {options.file}: {error.strerror}") from None
    with bundle:
        report = import_bundle(profile, bundle, dry_run=options.dry_run)
    verb = "would import" if report.get("dry_run") else "imported"
    project = report.get("project", {})
    print(f"{verb} bundle {report.get('bundle')} into project {project.get('slug')}")
    for name, count in report.get("counts", {}).items():
        print(f"  {name}: {count}")
    for member in report.get("not_added", []):
        print(f"  member not added (add members in the admin): {member}")


def cmd_hook_claude_code(options: argparse.Namespace) -> None:
    hook_input = _hook_input()
    timeout = hooks.hook_timeout(options.timeout)
    if options.event == "session-start":
        _emit(hooks.session_start_output(options.profile, hook_input, timeout))
        return
    if options.event == "session-end":
        hooks.session_end(options.profile, hook_input, timeout)
        return
    if options.event == "post-tool-use":
        answer = hooks.post_tool_use(options.profile, hook_input, timeout)
    else:
        answer = hooks.pre_compact(options.profile, hook_input, timeout)
    if answer is not None:
        _emit(answer)


def cmd_hook_session_start(options: argparse.Namespace) -> None:
    text, _ = hooks.brief(options.profile, hooks.hook_timeout(options.timeout))
    sys.stdout.write(text)


def cmd_hook_turn(options: argparse.Namespace) -> None:
    warning = hooks.after_turn(options.profile, options.transcript)
    if warning:
        print(warning, file=sys.stderr)


def cmd_hooks_install(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    if options.agent == "claude-code":
        paths = installers.install_claude_code(
            profile, options.settings, options.mcp_json, options.local_settings
        )
    elif options.agent == "codex":
        paths = installers.install_codex(profile, options.config, options.agents_md)
    else:
        if options.path is None:
            raise ProfileError("hooks install shell needs --path FILE")
        paths = installers.install_shell(profile, options.path)
    print(installers.installed(paths))


def _turns(options: argparse.Namespace) -> list[Any]:
    if options.claude_transcript:
        return hooks.claude_transcript_turns(Path(options.claude_transcript))
    if options.transcript:
        return hooks.jsonl_turns(Path(options.transcript))
    raise ProfileError("give --transcript FILE (JSONL) or --claude-transcript FILE")


def cmd_summary_update(options: argparse.Namespace) -> None:
    profile = load_profile(options.profile)
    started = hooks.run_summary(profile, _turns(options), force=not options.if_due, wait=True)
    print("running summary updated" if started else "no update due, or one is in flight")


def cmd_summary_turn(options: argparse.Namespace) -> None:
    """After a turn: return at once; the check and the update run in a detached process."""
    profile = load_profile(options.profile)
    hooks.detach(
        *("summary", "update", "--if-due", "--profile", profile.name),
        *("--transcript", options.transcript),
    )


def cmd_journal(options: argparse.Namespace) -> None:
    from heyaira_client.journal import Journal

    _emit(Journal().pending())


# --- the parser --------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="heyaira", description="The HeyAira client.")
    commands = root.add_subparsers(dest="command", required=True)

    def command(name: str, handler: Callable[[argparse.Namespace], None], help: str) -> Any:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument("--profile", help="profile name (default: HEYAIRA_PROFILE, the file's)")
        sub.set_defaults(handler=handler)
        return sub

    profile = commands.add_parser("profile", help="manage identity profiles")
    profile_commands = profile.add_subparsers(dest="profile_command", required=True)
    add = profile_commands.add_parser("add", help="add or replace a profile")
    add.set_defaults(handler=cmd_profile_add)
    add.add_argument("name")
    add.add_argument(
        "--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp"
    )
    add.add_argument("--resource", help="what server_identity must report (default: --url)")
    add.add_argument("--instance", required=True, help="the instance server_identity must report")
    add.add_argument("--project", required=True, help="the project's slug or id")
    add.add_argument("--credential", required=True, help="env:VARIABLE, file:PATH or oauth")
    add.add_argument("--agent", default="agent", help="whose running summary this keeps")
    add.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    add.add_argument("--summarizer", help="a command that turns a prompt on stdin into a summary")
    add.add_argument("--default", action="store_true", help="make it the default profile")

    login = command("login", cmd_login, "sign in with OAuth (PKCE) in the browser")
    login.add_argument("--no-browser", action="store_true", help="print the URL, do not open it")
    login.add_argument("--port", type=int, default=0, help="loopback port (default: any free)")
    login.add_argument("--timeout", type=float, default=300.0, help="seconds to wait")

    whoami = command("whoami", cmd_whoami, "the server's identity, checked against the profile")
    whoami.add_argument("--json", action="store_true")

    context = command("context", cmd_context, "the recovery brief (Markdown)")
    context.add_argument("--agent", help="--json: whose running summary (default: the profile's)")
    context.add_argument("--json", action="store_true")

    tasks = command("tasks", cmd_tasks, "list tasks")
    tasks.add_argument("--status", default="open", help="open (default), todo, in_progress...")
    tasks.add_argument("--limit", type=int, default=20)
    tasks.add_argument("--json", action="store_true")

    claim = command("claim", cmd_claim, "claim a task with a lease (compare-and-set on version)")
    claim.add_argument("task_id", nargs="?")
    claim.add_argument("--next", action="store_true", help="the next task: task_claim_next")
    claim.add_argument("--version", type=int, help="expected version (default: read it)")
    claim.add_argument("--next-step")
    claim.add_argument(
        "--session-ref", help=f"this session's id, the lease's holder ({SESSION_REF_VARIABLE})"
    )
    claim.add_argument("--lease-seconds", type=int, help="default: the project's")

    heartbeat = command("heartbeat", cmd_heartbeat, "renew this session's leases")
    heartbeat.add_argument("task_id", nargs="?", help="default: every lease `claim` recorded")
    heartbeat.add_argument("--session-ref", help=f"default: {SESSION_REF_VARIABLE}")
    heartbeat.add_argument("--if-due", action="store_true", help="only leases a third through")

    handoff = command("handoff", cmd_handoff, "hand a task over with a work receipt")
    handoff.add_argument("task_id")
    handoff.add_argument("--summary", required=True, help="what was done")
    handoff.add_argument(
        "--session-ref", help=f"this session's id (default: {SESSION_REF_VARIABLE})"
    )
    handoff.add_argument("--status", help="e.g. done, todo, blocked")
    handoff.add_argument("--next-step")
    handoff.add_argument("--note", help="a handoff note for the next session")
    handoff.add_argument("--test", action="append", default=[], help="NAME=passed|failed|...")
    handoff.add_argument("--commit", action="append", default=[], help="a commit id")
    handoff.add_argument("--version", type=int, help="expected version (default: read it)")

    note = command("note", cmd_note, "record a note")
    note.add_argument("text")
    note.add_argument("--title")

    decide = command("decide", cmd_decide, "record a decision")
    decide.add_argument("title")
    decide.add_argument("--content", required=True)
    decide.add_argument("--rationale", required=True)
    decide.add_argument("--source", required=True)
    decide.add_argument("--supersedes")

    hook = commands.add_parser(
        "hook", help="run a session hook (called by the agent; always exits 0)"
    )
    hook_agents = hook.add_subparsers(dest="hook_agent", required=True)
    claude = hook_agents.add_parser("claude-code", help="Claude Code hooks (JSON on stdin)")
    claude.add_argument(
        "event", choices=["session-start", "pre-compact", "post-tool-use", "session-end"]
    )
    claude.set_defaults(handler=cmd_hook_claude_code)
    start = hook_agents.add_parser("session-start", help="the brief as Markdown, or a warning")
    start.set_defaults(handler=cmd_hook_session_start)
    after = hook_agents.add_parser("turn", help="after a turn: the running summary, if due")
    after.add_argument("--transcript", required=True, help="JSONL, one {role, text} a line")
    after.set_defaults(handler=cmd_hook_turn)
    for sub in (claude, start, after):
        sub.add_argument("--profile")
    for sub in (claude, start):
        sub.add_argument(
            "--timeout",
            type=float,
            help=f"seconds to wait for HeyAira (default: {hooks.TIMEOUT_VARIABLE}, "
            f"else {hooks.DEFAULT_TIMEOUT:g})",
        )

    hooks_parser = commands.add_parser("hooks", help="install session hooks")
    hooks_commands = hooks_parser.add_subparsers(dest="hooks_command", required=True)
    install = hooks_commands.add_parser("install", help="write an agent's hook configuration")
    install.set_defaults(handler=cmd_hooks_install)
    install.add_argument("agent", choices=["claude-code", "codex", "shell"])
    install.add_argument("--profile")
    install.add_argument(
        "--settings", type=Path, help="Claude Code: default ~/.claude/settings.json"
    )
    install.add_argument(
        "--local-settings",
        type=Path,
        help="Claude Code: this machine's part (default: settings.local.json beside --settings)",
    )
    install.add_argument("--mcp-json", type=Path, help="Claude Code: also a project .mcp.json")
    install.add_argument("--config", type=Path, help="Codex: default ~/.codex/config.toml")
    install.add_argument("--agents-md", type=Path, help="Codex: default ./AGENTS.md")
    install.add_argument("--path", type=Path, help="shell: where to write the script")

    summary = commands.add_parser("summary", help="the running summary")
    summary_commands = summary.add_subparsers(dest="summary_command", required=True)
    update = summary_commands.add_parser("update", help="summarize a transcript and store it")
    update.set_defaults(handler=cmd_summary_update)
    turn = summary_commands.add_parser("turn", help="after a turn: update in the background if due")
    turn.set_defaults(handler=cmd_summary_turn)
    for sub in (update, turn):
        sub.add_argument("--profile")
        sub.add_argument("--transcript", help="JSONL, one {role, text} a line")
    update.add_argument("--claude-transcript", help="a Claude Code transcript (JSONL)")
    update.add_argument("--if-due", action="store_true", help="only when an update is due")
    turn.set_defaults(claude_transcript=None)

    export = command("export", cmd_export, "the project's bundle (owners and admins)")
    export.add_argument("--output", help="the file to write (default: standard output)")
    into = command("import", cmd_import, "a bundle into this (empty) project (owners)")
    into.add_argument("file", help="the bundle (heyaira export, project_export)")
    into.add_argument("--dry-run", action="store_true", help="check and report; keep nothing")

    journal = commands.add_parser("journal", help="unfinished keyed writes")
    journal.set_defaults(handler=cmd_journal)
    return root


def main(argv: Sequence[str] | None = None) -> None:
    options = parser().parse_args(argv)
    if not os.environ.get("HEYAIRA_DEBUG"):
        # The SDK logs its own tracebacks for failures this command reports as one line.
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
    try:
        options.handler(options)
    except BaseException as error:
        found = find_client_error(error)
        if found is None:
            if os.environ.get("HEYAIRA_DEBUG") or not isinstance(error, Exception):
                raise
            # Connection refused, a timeout, a broken answer: one line, not a traceback.
            print(f"heyaira: {describe(error, url=_where(options))}", file=sys.stderr)
            sys.exit(LostResponse.exit_code)
        print(f"heyaira: {found}", file=sys.stderr)
        sys.exit(found.exit_code)


def _where(options: argparse.Namespace) -> str:
    try:
        return load_profile(getattr(options, "profile", None)).url
    except HeyAiraClientError:
        return "the server"
