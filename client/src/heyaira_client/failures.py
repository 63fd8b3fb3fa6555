"""One line for any failure to reach HeyAira: what the `heyaira` command prints and what a session
hook tells the agent, instead of a traceback or an `ExceptionGroup(...)` repr.

The MCP SDK runs each call in task groups, so a refused connection arrives as an exception group
around httpx's ConnectError; the line names the cause a person can act on.
"""

from __future__ import annotations

from collections.abc import Iterator

from heyaira_client.errors import ServerFault, find_client_error


def leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups, and what each was raised from."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
        return
    yield error
    cause = error.__cause__
    if cause is not None and cause is not error:
        yield from leaves(cause)


def describe(error: BaseException, *, url: str, timeout: float | None = None) -> str:
    """What went wrong, in one line that names the server."""
    import httpx2  # here, not at the top: a hook that never fails never loads it

    found = find_client_error(error)
    if found is not None:
        return str(found)
    every = list(leaves(error))
    for leaf in every:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            within = f" within {timeout:g} s" if timeout else " in time"
            return f"no answer from {url}{within}"
    for leaf in every:
        if isinstance(leaf, ServerFault):
            return str(leaf)
        if isinstance(leaf, httpx2.ConnectError):
            return f"cannot connect to {url} (is the server running, and is the URL right?)"
        if isinstance(leaf, httpx2.HTTPStatusError):
            return f"{url} answered HTTP {leaf.response.status_code}"
        if isinstance(leaf, httpx2.TransportError):
            return f"the connection to {url} failed ({_first_line(leaf)})"
    return f"no usable answer from {url} ({_first_line(every[0] if every else error)})"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    name = type(error).__name__
    return f"{name}: {text[0][:200]}" if text else name
