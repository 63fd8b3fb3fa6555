"""The running summary: a rolling state block per agent (the server's docs/architecture.md).

After each successful turn the harness calls `RunningSummary.after_turn(turns)`. It returns at
once; when an update is due (enough person turns since the last version, or the last version is
old enough) it starts one in the background, unless one is already in flight for that agent
(a file lock under the state directory, so this holds across threads and processes; a turn that
ends mid-update is picked up by the next turn's check, never by a second call). The update hands
the summarizer the newest turns within a character budget and the previous summary, accepts the
reply only if it is a summary (`accept_summary`), and stores it with
`state_put(expected_version=...)`. Any failure keeps the last good version.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio

from heyaira_client.errors import HeyAiraClientError, SummaryRejected, ToolError
from heyaira_client.paths import private_dir, state_dir, write_private
from heyaira_client.profile import Profile, SummarySettings

if TYPE_CHECKING:  # the MCP SDK loads only when a connection is made
    from heyaira_client.session import HeyAira

HEADING = "# Running summary"


@dataclass(frozen=True)
class Turn:
    role: Literal["person", "agent"]
    text: str


@dataclass(frozen=True)
class SummaryRequest:
    """What a summarizer gets: the previous summary and the newest turns, oldest first."""

    previous: str | None
    turns: tuple[Turn, ...]
    max_chars: int

    def prompt(self) -> str:
        lines = [
            "Update the running summary of the conversation below so that a fresh session can",
            "pick it up: the goal, what is done, what is pending, what the person prefers.",
            f"Reply with Markdown only. The first line must be exactly '{HEADING}'. Use short",
            f"lists. At most {self.max_chars} characters. Nothing addressed to the reader.",
            "",
            "## Previous summary",
            "",
            self.previous or "(none yet)",
            "",
            "## Newest turns, oldest first",
            "",
        ]
        lines += [f"[{turn.role}] {turn.text}" for turn in self.turns]
        return "\n".join(lines) + "\n"


Summarizer = Callable[[SummaryRequest], str]


class CommandSummarizer:
    """A summarizer that runs a local command: the prompt on its stdin, the reply from its
    stdout. A non-zero exit or a timeout is a failed update (the last good version stays)."""

    def __init__(self, argv: Sequence[str], *, timeout: float = 300.0) -> None:
        if not argv:
            raise ValueError("a summarizer command needs at least a program")
        self.argv = list(argv)
        self.timeout = timeout

    def __call__(self, request: SummaryRequest) -> str:
        try:
            done = subprocess.run(  # noqa: S603 (the profile's own command, no shell)
                self.argv,
                input=request.prompt(),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SummaryRejected(f"the summarizer command failed: {error}") from None
        if done.returncode != 0:
            raise SummaryRejected(f"the summarizer command exited with {done.returncode}")
        return done.stdout


# --- accepting a reply ------------------------------------------------------------------------

_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_REFUSAL_OR_ERROR = re.compile(
    r"^\W*(?:i'?m sorry|i am sorry|sorry,|i can(?:no|')t|i cannot|i'?m (?:not able|unable)"
    r"|i am (?:not able|unable)|as an ai\b|unfortunately,? i\b|error\s*(?::|\d{3}\b)"
    r"|an error occurred|exception:|traceback \(most recent call last\)|rate limit exceeded"
    r"|request failed|internal server error|\{\s*\"error\")",
    re.IGNORECASE,
)
_TO_THE_READER = re.compile(
    r"\b(?:you|your|let me know|hope (?:this|that) helps|feel free|happy to help|i can also"
    r"|would you like|shall i)\b",
    re.IGNORECASE,
)


def accept_summary(reply: str, *, max_chars: int = SummarySettings.max_chars) -> str:
    """The body to store, or SummaryRejected: it must start with the heading, not be a refusal
    or an error text, and fit the cap once a closing paragraph addressed to the reader is cut."""
    text = reply.replace("\r\n", "\n").lstrip("\ufeff").strip()
    first, _, rest = text.partition("\n")
    if not first.startswith(HEADING):
        raise SummaryRejected(f"the reply does not start with '{HEADING}'")
    first_content = next((line for line in rest.split("\n") if line.strip()), "")
    if _REFUSAL_OR_ERROR.match(first[len(HEADING) :]) or (
        not _ITEM.match(first_content) and _REFUSAL_OR_ERROR.match(first_content.strip())
    ):
        raise SummaryRejected("the reply is a refusal or an error text, not a summary")
    if not rest.strip():
        raise SummaryRejected("the reply has the heading and nothing under it")
    text = cut_closing_chatter(text)
    if len(text) > max_chars:
        raise SummaryRejected(f"the reply is {len(text)} characters; the cap is {max_chars}")
    return text


def cut_closing_chatter(text: str) -> str:
    """Drop what follows the final list when it speaks to the reader ("Let me know if...")."""
    lines = text.split("\n")
    items = [i for i, line in enumerate(lines) if _ITEM.match(line)]
    if not items:
        return text
    end = items[-1] + 1
    while end < len(lines) and lines[end].strip():  # the item's continuation lines stay
        end += 1
    tail = "\n".join(lines[end:]).strip()
    if tail and not tail.startswith("#") and _TO_THE_READER.search(tail):
        return "\n".join(lines[:end]).rstrip()
    return text


def newest_within(turns: Sequence[Turn], budget: int) -> tuple[Turn, ...]:
    """The newest turns whose text fits the budget, oldest first; the newest one always goes
    (cut to the budget) so that a single long turn is not dropped altogether."""
    chosen: list[Turn] = []
    used = 0
    for turn in reversed(turns):
        if used + len(turn.text) > budget:
            if not chosen:
                chosen.append(Turn(turn.role, turn.text[-budget:]))
            break
        chosen.append(turn)
        used += len(turn.text)
    return tuple(reversed(chosen))


# --- deciding and running -----------------------------------------------------------------------


@dataclass
class _Mark:
    """What this process knows of the newest stored version."""

    version: int = 0
    stored_at: float | None = None  # epoch seconds; None when there is no version
    person_turns: int = 0  # person turns in the transcript the version was made from


def _epoch(rfc3339: str) -> float | None:
    try:
        return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _connection(profile: Profile) -> HeyAira:
    """A connection to the profile's server; the MCP SDK is loaded here, when one is needed."""
    from heyaira_client.session import HeyAira

    return HeyAira(profile)


class RunningSummary:
    def __init__(
        self,
        profile: Profile,
        summarizer: Summarizer,
        *,
        agent: str | None = None,
        settings: SummarySettings | None = None,
        connect: Callable[[], HeyAira] | None = None,
        lock_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.profile = profile
        self.agent = agent or profile.agent
        self.summarizer = summarizer
        self.settings = settings or profile.summary
        self._connect = connect or (lambda: _connection(profile))
        directory = private_dir(lock_dir or state_dir() / "summaries")
        self._lock_path = directory / f"{profile.name}-{self.agent}.lock"
        # What the last update stored, kept between processes (a hook runs once per turn).
        self._mark_path = directory / f"{profile.name}-{self.agent}.json"
        self._clock = clock
        self._mark = self._load_mark()
        self._guard = threading.Lock()  # around _mark and _thread
        self._thread: threading.Thread | None = None
        self.started = 0  # updates started by this object
        self.last_error: str | None = None

    def _load_mark(self) -> _Mark:
        try:
            data = json.loads(self._mark_path.read_text(encoding="utf-8"))
            return _Mark(int(data["version"]), data.get("stored_at"), int(data["person_turns"]))
        except (OSError, ValueError, KeyError, TypeError):
            return _Mark()

    def _set_mark(self, mark: _Mark) -> None:
        with self._guard:
            self._mark = mark
        write_private(self._mark_path, json.dumps(mark.__dict__))

    def know(self, *, version: int, created_at: str) -> None:
        """Seed what is stored (from recover(): context.state) so the first check needs no
        round trip."""
        with self._guard:
            self._mark = _Mark(version=version, stored_at=_epoch(created_at))

    def due(self, turns: Sequence[Turn]) -> bool:
        person = sum(1 for turn in turns if turn.role == "person")
        with self._guard:
            mark = self._mark
        # Fewer person turns than the last version saw: a new conversation, counted from 0.
        baseline = mark.person_turns if person >= mark.person_turns else 0
        if person - baseline >= self.settings.every_person_turns:
            return True
        stored_at = mark.stored_at
        return (
            stored_at is not None
            and person > baseline
            and self._clock() - stored_at >= self.settings.max_age_seconds
        )

    def after_turn(self, turns: Sequence[Turn], *, force: bool = False) -> bool:
        """Returns at once: True when this call started an update in the background."""
        if not (force or self.due(turns)):
            return False
        lock = self._try_lock()
        if lock is None:
            return False  # one is in flight for this agent; the next turn checks again
        snapshot = tuple(turns)
        thread = threading.Thread(
            target=self._run, args=(lock, snapshot), name=f"summary-{self.agent}", daemon=True
        )
        with self._guard:
            self.started += 1
            self._thread = thread
        thread.start()
        return True

    def wait(self, timeout: float | None = None) -> None:
        """Block until the update in flight (if any) is over: for hooks and tests."""
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _try_lock(self) -> int | None:
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return None
        return descriptor

    def _run(self, lock: int, turns: tuple[Turn, ...]) -> None:
        try:
            anyio.run(self._update, turns)
            self.last_error = None
        except (HeyAiraClientError, OSError) as error:
            self.last_error = str(error)  # the last good version stays as it is
        except Exception as error:  # a summarizer may raise anything; it must not kill the turn
            self.last_error = f"{type(error).__name__}: {error}"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            os.close(lock)

    async def _update(self, turns: tuple[Turn, ...]) -> None:
        person = sum(1 for turn in turns if turn.role == "person")
        async with self._connect() as heyaira:
            await heyaira.verify()
            latest = await heyaira.state_get(self.agent)
            expected = latest.version if latest else 0
            request = SummaryRequest(
                previous=latest.body if latest else None,
                turns=newest_within(turns, self.settings.budget_chars),
                max_chars=self.settings.max_chars,
            )
            reply = await anyio.to_thread.run_sync(self.summarizer, request)
            body = accept_summary(str(reply), max_chars=self.settings.max_chars)
            try:
                stored = await heyaira.state_put(body, agent=self.agent, expected_version=expected)
            except ToolError as error:
                if error.code == "stale_version" and error.current_version is not None:
                    # Someone else stored one meanwhile; the next check starts from it.
                    self._set_mark(_Mark(error.current_version, self._clock(), person))
                raise
        self._set_mark(_Mark(int(stored["version"]), self._clock(), person))
