"""Every command README.md shows runs exactly as written, on a fresh clone.

The commands are read out of the README (every ```sh block, and inline code that reads as a
command) and each must be listed in COVERAGE below: a new README command without coverage fails
here. Each is then run through `bash -c` with its exact text, in a fresh copy of the working tree
(tests/readme_runner.py: a `.venv` shim onto the suite's virtualenv so that pip does not run;
everything else is real), inside a private network namespace where 127.0.0.1:8000 and :5432 are
free, so `make run` serves on the README's own port beside anything else on this machine.

- servers (`make run`, gunicorn): started, /healthz awaited, real requests made, stopped;
- `make test`: would recurse; `.ci/run` runs those lines exactly as written (checked here);
- PostgreSQL lines: against a throwaway cluster inside the namespace (only role `postgres`, as
  on a fresh machine), whatever the suite's database;
- all of it once per CI run, in the SQLite pass (the clone's databases are its own);
- `createsuperuser` and `changepassword` ask on the terminal: run on a pseudo-terminal and answered.
- the client section: `pip install ./client` is run by tests/client/test_package.py (into a
  directory of its own: the suite's virtualenv is shared); here the package is installed the
  same way (tests/client/install.py) and the section's other commands run as one shell, in a
  fresh home, against `make run`; `heyaira login` needs a person at a browser and is run by
  tests/client/test_login.py with Chromium. client/README.md shows only commands listed here.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.install import installed_environment, pip_install_client
from tests.live import once_in_ci
from tests.readme_runner import (
    OTHER_BLOCKS,
    PROBE,
    REPO,
    SHELL_BLOCKS,
    URL,
    PostgresCluster,
    Sandbox,
    Server,
    fence_infos,
    fresh_clone,
    inline_commands,
    postgres_available,
    readme_commands,
    sandbox,
    sandbox_available,
    stop,
)

README = REPO / "README.md"
SERVER, RUN, ASKS, CI, PG, PG_SERVER, SYNOPSIS, MENTION, REST = (
    "server",
    "run",
    "asks on the terminal",
    "run by .ci/run",
    "PostgreSQL",
    "PostgreSQL server",
    "synopsis",
    "mention",
    "REST session: one shell, in order",
)
# `make check` would recurse too; what it runs is a part of `make test` (checked here in the
# Makefile), which .ci/run runs.
PART_OF_TEST = "the part of make test that starts nothing"
MAKE_RUN = "make run    # creates .venv, installs, migrates SQLite, serves http://127.0.0.1:8000"
MAKE_TEST = "make test   # the whole suite, plus ruff and mypy"
DEMO_KEY = (
    "python manage.py create_api_key demo --user owner --scopes continuity:read,continuity:write "
    "--label claude-code"
)
CREATEDB = "createdb -h 127.0.0.1 -U postgres heyaira"
PG_RUN = "DATABASE_URL=postgres://postgres@127.0.0.1:5432/heyaira make run"
PG_TEST = "DATABASE_URL=postgres://postgres@127.0.0.1:5432/heyaira make test"
GUNICORN = (
    ".venv/bin/gunicorn heyaira.asgi:application -k runtime.workers.BalancedUvicornWorker -w 2 "
    "--bind 127.0.0.1:8000"
)
CREATE_PROJECT = 'python manage.py create_project web --name "Web app" --owner owner'
CREATE_ALICE = "python manage.py createsuperuser --username alice --email alice@example.com"
ADD_MEMBER = "python manage.py add_member web alice admin"
ALICE_KEY = (
    "python manage.py create_api_key web --user alice --scopes continuity:read --expires-days 90 "
    "--label alice-laptop"
)
PURGE = "python manage.py purge_idempotency"
EXPORT = "python manage.py project_export web --output web.jsonl"
IMPORT_BEADS = (
    "python manage.py project_import --from beads "
    "tests/continuity/bundle/samples/beads/issues.jsonl --slug web-issues"
)
CHANGE_PASSWORD = "python manage.py changepassword owner"
PIP_INSTALL = "pip install ./client"
CLIENT_LOGIN = "heyaira login --profile demo-login"
# The form of the commands the installer writes into .claude/settings.json, run by the session.
HOOK_FORM = "heyaira hook claude-code ... --profile demo"
CLIENT, PACKAGE, BROWSER_LOGIN = (
    "client session: one shell, in order",
    "run by tests/client/test_package.py",
    "run by tests/client/test_login.py (a person in Chromium)",
)
CLIENT_README = REPO / "client" / "README.md"
# docs/operating.md's recipes that a quick-start clone can run as written.
DOCS = REPO / "docs" / "operating.md"
BACKUP = 'sqlite3 var/heyaira.sqlite3 ".backup var/heyaira-backup.sqlite3"'
RESTORE = (
    "cp var/heyaira-backup.sqlite3 var/heyaira.sqlite3",
    "rm -f var/heyaira.sqlite3-wal var/heyaira.sqlite3-shm",
)


# What Claude Code sends a SessionStart hook on stdin (its hook reference's example).
SESSION_START = {
    "session_id": "abc123",
    "transcript_path": "/home/person/.claude/projects/demo/abc123.jsonl",
    "cwd": "/home/person/demo",
    "hook_event_name": "SessionStart",
    "source": "startup",
    "model": "claude-sonnet-4-6",
}


# Every command the README shows, and how this test covers it.
def rest_session(markdown: str) -> list[str]:
    """The commands of the README's REST block, in order: they hand values on in variables
    (the key, the write_context, the task id), so they run as one script in one shell."""
    section = markdown.split("## The REST API", 1)[1].split("\n## ", 1)[0]
    return readme_commands(section)


def client_session(markdown: str) -> list[str]:
    """The client section's commands that run here, in order, in one shell (the key travels
    in HEYAIRA_KEY)."""
    section = markdown.split("## The client: ", 1)[1].split("\n## ", 1)[0]
    return [c for c in readme_commands(section) if c not in (PIP_INSTALL, CLIENT_LOGIN)]


REST_SESSION = rest_session(README.read_text())
CLIENT_SESSION = client_session(README.read_text())

COVERAGE: dict[str, str] = {
    **dict.fromkeys(REST_SESSION, REST),
    **dict.fromkeys(CLIENT_SESSION, CLIENT),
    PIP_INSTALL: PACKAGE,
    CLIENT_LOGIN: BROWSER_LOGIN,
    HOOK_FORM: CLIENT,
    MAKE_RUN: SERVER,
    "make run": SERVER,  # inline; the restart runs it with exactly this text
    MAKE_TEST: CI,
    "make test": CI,
    "make check": PART_OF_TEST,
    "make conformance-tools": CI,
    "make web-tools": CI,
    DEMO_KEY: RUN,
    CREATEDB: PG,
    PG_RUN: PG_SERVER,
    PG_TEST: CI,
    GUNICORN: SERVER,
    CREATE_PROJECT: RUN,
    CREATE_ALICE: ASKS,
    ADD_MEMBER: RUN,
    ALICE_KEY: RUN,
    PURGE: RUN,
    EXPORT: RUN,
    IMPORT_BEADS: RUN,
    "heyaira export --output FILE": MENTION,
    "heyaira import FILE [--dry-run]": MENTION,  # run by tests/client/test_import.py
    CHANGE_PASSWORD: ASKS,
    "python manage.py ...": MENTION,
    "python manage.py create_project SLUG --name NAME --owner USERNAME": SYNOPSIS,
    "python manage.py add_member SLUG USERNAME ROLE": SYNOPSIS,
    "python manage.py create_api_key SLUG --user USERNAME [--scopes "
    "continuity:read,continuity:write] [--expires-days N] [--label LABEL]": SYNOPSIS,
    "python manage.py purge_idempotency [--older-than-hours N]": SYNOPSIS,
    "python manage.py project_export SLUG [--output FILE]": SYNOPSIS,
    "python manage.py project_import --from TOOL PATH --slug SLUG [--owner USERNAME] "
    "[--apply]": SYNOPSIS,
}


# --- the README's commands and their coverage ------------------------------------------------


def test_every_readme_command_is_listed_with_its_coverage():
    text = README.read_text()
    unlabelled = set(fence_infos(text)) - set(SHELL_BLOCKS) - set(OTHER_BLOCKS)
    assert not unlabelled, f"label every block: sh (run here), or one of {OTHER_BLOCKS}"
    shown = readme_commands(text) + inline_commands(text)
    assert set(shown) == set(COVERAGE), (
        f"not covered: {sorted(set(shown) - set(COVERAGE))}; "
        f"no longer in the README: {sorted(set(COVERAGE) - set(shown))}"
    )


def test_the_client_readme_shows_only_commands_covered_here():
    text = CLIENT_README.read_text()
    unlabelled = set(fence_infos(text)) - set(SHELL_BLOCKS) - set(OTHER_BLOCKS)
    assert not unlabelled, f"label every block: sh (run here), or one of {OTHER_BLOCKS}"
    shown = readme_commands(text)
    assert shown, "client/README.md shows no commands"
    assert set(shown) <= set(COVERAGE), f"not covered: {sorted(set(shown) - set(COVERAGE))}"


def test_the_tests_named_as_coverage_exist():
    for kind in set(COVERAGE.values()):
        if kind.startswith("run by tests/"):
            assert (REPO / kind.split()[2]).is_file(), kind


def test_ci_runs_the_readme_make_test_lines_exactly():
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    for command, kind in COVERAGE.items():
        if kind == CI:
            assert command.split("#")[0].strip() in lines, command


def make_targets() -> dict[str, tuple[list[str], list[str]]]:
    """The Makefile's rules: target -> (prerequisites, recipe lines)."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] = []
    for line in (REPO / "Makefile").read_text().splitlines():
        rule = re.match(r"^([\w.$()/-]+):(?!=)\s*(.*)$", line)
        if rule and not line.startswith("\t"):
            prerequisites = rule.group(2).split("#")[0].split()
            if rule.group(1) not in rules:
                rules[rule.group(1)] = ([], [])
            if not prerequisites or "=" not in rule.group(2):
                rules[rule.group(1)][0].extend(prerequisites)
            current = rules[rule.group(1)][1]
        elif line.startswith("\t"):
            current.append(line.strip())
    return rules


def steps(rules: dict[str, tuple[list[str], list[str]]], target: str) -> list[str]:
    """What a target runs: its prerequisites, then the targets its recipe hands to make."""
    prerequisites, recipe = rules[target]
    handed = [
        word
        for line in recipe
        if line.startswith(("$(PARALLEL)", "$(MAKE)"))
        for word in line.split()[1:]
        if not word.startswith("-")
    ]
    return [*prerequisites, *handed]


def test_make_check_is_make_tests_lint_types_and_tests_that_start_nothing():
    rules = make_targets()
    check, test = steps(rules, "check"), steps(rules, "test")
    assert test == ["lint", "typecheck", "pytest", "smoke"], test
    assert [t for t in check if t in test] == ["lint", "typecheck"], check
    (quick,) = [t for t in check if t not in test]
    assert rules[quick][1] == [f'{rules["pytest"][1][0]} -m "not live"'], rules[quick]
    assert [c for c, kind in COVERAGE.items() if kind == PART_OF_TEST] == ["make check"]


def test_the_operating_guide_still_shows_the_recipes_run_here():
    shown = readme_commands(DOCS.read_text())
    for command in (CHANGE_PASSWORD, BACKUP, *RESTORE):
        assert command in shown, command


def synopsis_pattern(synopsis: str) -> re.Pattern[str]:
    """UPPERCASE words are placeholders; `[--flag VALUE]` is optional with any value."""
    value = r'(?:"[^"]*"|\S+)'
    parts: list[str] = []
    for optional, plain in re.findall(r"\[([^\]]+)\]|(\S+)", synopsis):
        if optional:
            flag = optional.split()[0]
            parts.append(rf"(?:\s+{re.escape(flag)}(?:\s+{value})?)?")
        else:
            word = value if re.fullmatch(r"[A-Z][A-Z_]*", plain) else re.escape(plain)
            parts.append(rf"\s+{word}" if parts else word)
    return re.compile("".join(parts) + "$")


def test_every_synopsis_has_a_runnable_example_in_the_readme():
    examples = [c for c, kind in COVERAGE.items() if kind in (RUN, ASKS)]
    for synopsis in (c for c, kind in COVERAGE.items() if kind == SYNOPSIS):
        pattern = synopsis_pattern(synopsis)
        assert any(pattern.match(example) for example in examples), synopsis


# --- running them ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[Sandbox]:
    if not sandbox_available():
        pytest.skip("needs unshare --net and nsenter (root in a container that allows them)")
    clone = fresh_clone(tmp_path_factory.mktemp("fresh-clone"))
    with sandbox(clone) as sandboxed:
        yield sandboxed


def ok(box: Sandbox, command: str) -> str:
    done = box.run(command)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def serving(box: Sandbox, command: str, log: Path, **env: str) -> Server:
    server = box.start(command, log, env=env or None)
    health = box.python(PROBE, action="healthz", url=URL, timeout=240)
    assert health is not None, f"{command} did not serve:\n{server.text()}"
    assert '"ok"' in health, health
    assert server.process.poll() is None, server.text()
    return server


def identity(box: Sandbox, key: str) -> dict:
    answer = box.python(
        PROBE, action="tool", url=URL, key=key, name="server_identity", arguments={}
    )
    assert answer["status"] == 200, answer
    result = answer["body"]["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


# The fresh clone runs on its own databases whatever database the suite uses: the quick start's
# SQLite, and for the PostgreSQL lines a cluster of its own inside the sandbox. On PostgreSQL
# these tests would repeat the SQLite pass's work exactly, clone included.
ONCE = once_in_ci("the fresh clone has its own SQLite and its own PostgreSQL cluster")


@ONCE
def test_the_readme_runs_as_written_on_a_fresh_clone(box: Sandbox, tmp_path: Path):
    # Quick start: `make run` on an empty clone, then the agent's API key, used over MCP.
    server = serving(box, MAKE_RUN, tmp_path / "make-run.log")
    password = re.search(r"password:\s+(\S+)", server.text())
    assert password is not None, server.text()
    key = last_line(ok(box, DEMO_KEY))
    assert key.startswith("hak_")
    assert identity(box, key)["project"]["slug"] == "demo"
    assert identity(box, key)["principal"]["actor"].startswith("claude-code")  # its --label
    session = box.python(
        PROBE, action="sign_in", url=URL, username="owner", password=password.group(1)
    )
    assert session["status"] == 302, session
    assert session["location"] == "/admin/", session

    # The REST section: one shell, in the README's order, against the same server.
    rest = box.run("set -euo pipefail\n" + "\n".join(REST_SESSION))
    assert rest.returncode == 0, f"{rest.stdout}\n{rest.stderr}"
    box.ran.extend(REST_SESSION)
    out = rest.stdout
    assert '"write_context":' in out, out
    assert '"slug":"demo"' in out, out
    assert re.search(r'^ETag: "1"', out, re.MULTILINE | re.IGNORECASE), out
    assert '"status":"in_progress"' in out, out
    assert '"session_ref":"readme-1"' in out, out  # the handoff's receipt, listed
    assert '"error"' not in out, out

    # The client section: installed as `pip install ./client` installs it, then one shell in
    # the README's order, in a home of its own (its profiles, journal and tokens go there).
    site = pip_install_client(box.clone / "client", tmp_path / "client-site")
    client_home = tmp_path / "client-home"
    client_home.mkdir()
    client = box.run(
        "set -euo pipefail\n" + "\n".join(CLIENT_SESSION),
        env={**installed_environment(site), "HOME": str(client_home)},
    )
    assert client.returncode == 0, f"{client.stdout}\n{client.stderr}"
    out = client.stdout
    assert "resource, instance and project match" in out, out
    assert out.count("# HeyAira: Demo project (demo)") == 1, out
    assert "**Runbook**: The runbook is docs/operating.md." in out, out
    profiles = (client_home / ".config" / "heyaira" / "profiles.toml").read_text()
    assert '[profiles."demo-login"]' in profiles
    assert "hak_" not in profiles  # the profile names where the key is, never the key
    settings = json.loads((box.clone / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) == {"SessionStart", "PreCompact", "PostToolUse", "SessionEnd"}
    entry = json.loads((box.clone / ".mcp.json").read_text())["mcpServers"]["heyaira"]
    assert entry == {
        "type": "http",
        "url": f"{URL}/mcp",
        "headers": {"Authorization": "Bearer ${HEYAIRA_KEY}"},
    }
    # The installed SessionStart hook, run as Claude Code runs it (started from a shell where
    # HEYAIRA_KEY is set, as the README says), injects the same brief.
    (group,) = settings["hooks"]["SessionStart"]
    command = group["hooks"][0]["command"]
    head, tail = HOOK_FORM.split(" ... ")
    assert head.removeprefix("heyaira") in command, command
    assert command.endswith(tail), command
    hook = box.run(
        group["hooks"][0]["command"] + " <<< '" + json.dumps(SESSION_START) + "'",
        env={**installed_environment(site), "HOME": str(client_home), "HEYAIRA_KEY": key},
    )
    assert hook.returncode == 0, hook.stderr
    injected = json.loads(hook.stdout)["hookSpecificOutput"]
    assert injected["hookEventName"] == "SessionStart"
    assert injected["additionalContext"].startswith("# HeyAira: Demo project (demo)")
    box.ran.extend([*CLIENT_SESSION, HOOK_FORM])

    # Operator commands, in the README's order.
    ok(box, CREATE_PROJECT)
    alice = secrets.token_urlsafe(12)
    asked = box.run_interactive(CREATE_ALICE, [(r"Password: ", alice), (r"again\): ", alice)])
    assert asked.returncode == 0, asked
    assert "Superuser created successfully" in asked.stdout, asked
    assert "Added: alice is admin of web" in ok(box, ADD_MEMBER)
    alice_key = last_line(ok(box, ALICE_KEY))
    assert identity(box, alice_key)["principal"]["scopes"] == ["continuity:read"]
    ok(box, PURGE)
    ok(box, EXPORT)
    assert (box.clone / "web.jsonl").read_bytes().endswith(b'"record":"trailer"}\n')
    assert "From beads: 4 tasks" in ok(box, IMPORT_BEADS)  # a dry run: nothing imported

    # A restart keeps the quick start's secrets: the key and the session still work.
    stop(server)
    server = serving(box, "make run", tmp_path / "make-run-again.log")
    assert "accounts exist already" in server.text()
    assert identity(box, key)["project"]["slug"] == "demo"
    assert box.python(PROBE, action="admin", url=URL, cookie=session["cookie"])["status"] == 200

    # The lost-password recipe (docs/operating.md), then a sign-in with the new password.
    new_password = secrets.token_urlsafe(12)
    changed = box.run_interactive(
        CHANGE_PASSWORD, [(r"Password: ", new_password), (r"again\): ", new_password)]
    )
    assert changed.returncode == 0, changed
    assert "Password changed successfully" in changed.stdout, changed
    signed_in = box.python(
        PROBE, action="sign_in", url=URL, username="owner", password=new_password
    )
    assert signed_in["status"] == 302, signed_in

    # The SQLite backup while serving, a change, then the restore: the change is gone.
    ok(box, BACKUP)
    later = 'python manage.py create_project later --name "After the backup" --owner owner'
    ok(box, later)
    stop(server)
    for command in RESTORE:
        ok(box, command)
    server = serving(box, "make run", tmp_path / "make-run-restored.log")
    assert identity(box, key)["project"]["slug"] == "demo"
    ok(box, later)  # refused, were the project still there
    stop(server)

    # The production command, as typed right after the quick start (its file gives the settings).
    server = serving(box, GUNICORN, tmp_path / "gunicorn.log")
    assert identity(box, key)["project"]["slug"] == "demo"
    stop(server)

    # The same command in production: DEBUG off ignores the quick start's file, so its API key
    # (peppered with the file's secret) is refused and a challenge comes back.
    production = {
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "HEYAIRA_API_KEY_PEPPER": secrets.token_urlsafe(50),
    }
    server = serving(box, GUNICORN, tmp_path / "gunicorn-production.log", **production)
    refused = box.python(
        PROBE, action="tool", url=URL, key=key, name="server_identity", arguments={}
    )
    assert refused["status"] == 401, refused
    assert "Bearer" in refused["challenge"], refused
    stop(server)
    # And without real secrets production refuses to start, quick-start file or not.
    refusal = box.run("python manage.py check", env={"DEBUG": "false"})
    assert refusal.returncode != 0, refusal
    assert "SECRET_KEY must be set" in refusal.stderr, refusal

    for command in [c for c, kind in COVERAGE.items() if kind in (SERVER, RUN, ASKS, REST, CLIENT)]:
        assert command in box.ran, f"never ran: {command}"
    for command in (BACKUP, *RESTORE):
        assert command in box.ran, f"never ran: {command}"


@ONCE
def test_the_readme_postgresql_lines_run_as_written_on_a_fresh_machine(
    box: Sandbox, tmp_path: Path
):
    if not postgres_available():
        pytest.skip("needs root, the postgres user and PostgreSQL's server binaries")
    cluster = PostgresCluster(box)
    cluster.start()
    try:
        ok(box, CREATEDB)
        server = serving(box, PG_RUN, tmp_path / "make-run-postgres.log")
        assert "HeyAira is set up" in server.text()
        # No DATABASE_URL here: manage.py follows the latest `make run` to PostgreSQL.
        key = last_line(ok(box, DEMO_KEY))
        assert identity(box, key)["project"]["slug"] == "demo"
        stop(server)
    finally:
        cluster.stop()
    for command, kind in COVERAGE.items():
        if kind in (PG, PG_SERVER):
            assert command in box.ran, f"never ran: {command}"
