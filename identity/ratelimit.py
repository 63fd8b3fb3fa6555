"""A fixed-window counter on Django's cache, for endpoints anyone may call (client registration,
sign-in failures): counted per client network (core.networks: the address for IPv4, the /64
for IPv6), so that a host cannot multiply a limit by moving around its own prefix."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.core.cache import cache

from core.networks import client_network


@dataclass(frozen=True)
class Hit:
    count: int
    limit: int
    retry_after: int  # seconds until the window ends

    @property
    def allowed(self) -> bool:
        return self.count <= self.limit

    @property
    def first_refusal(self) -> bool:
        """Only the first refusal of a window is worth an audit row, not a flood of them."""
        return self.count == self.limit + 1


def _key(bucket: str, address: str, window: int, now: float) -> str:
    return f"ratelimit:{bucket}:{client_network(address)}:{int(now // window)}"


def peek(bucket: str, address: str, *, window: int) -> int:
    """The count so far in the current window, without adding to it."""
    return int(cache.get(_key(bucket, address, window, time.time()), 0))


def hit(bucket: str, address: str, *, limit: int, window: int) -> Hit:
    now = time.time()
    slot = int(now // window)
    key = _key(bucket, address, window, now)
    # add() is a no-op when the key exists, so concurrent first hits do not reset the count.
    cache.add(key, 0, timeout=window)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add() and incr()
        cache.set(key, 1, timeout=window)
        count = 1
    retry_after = max(1, int((slot + 1) * window - now))
    return Hit(count=count, limit=limit, retry_after=retry_after)
