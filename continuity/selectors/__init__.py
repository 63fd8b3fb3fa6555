"""Continuity selectors: bounded, project-filtered reads, each audited like any operation."""

from continuity.selectors.context import continuity_context
from continuity.selectors.identity import server_identity
from continuity.selectors.memory import memory_get, memory_search
from continuity.selectors.state import state_get
from continuity.selectors.tasks import task_get, task_list

__all__ = [
    "continuity_context",
    "memory_get",
    "memory_search",
    "server_identity",
    "state_get",
    "task_get",
    "task_list",
]
