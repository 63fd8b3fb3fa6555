"""The audit log: who tried what, allowed or rejected. Never bodies, tokens or contents."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models


class Outcome(models.TextChoices):
    SUCCESS = "success"
    REPLAYED = "replayed"
    REJECTED = "rejected"
    ERROR = "error"


class AppendOnlyQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise TypeError("Audit events are append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit events are append-only")


class AuditEvent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    occurred_at = models.DateTimeField(auto_now_add=True, db_index=True)
    request_id = models.CharField(max_length=64, blank=True)
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64, blank=True)
    actor_label = models.CharField(max_length=150, blank=True)
    # Plain columns, not foreign keys: deleting a user or project never rewrites history, and
    # the audit app depends on no other app.
    user_id = models.BigIntegerField(null=True, blank=True)
    client_id = models.CharField(max_length=100, blank=True)
    credential_kind = models.CharField(max_length=16, blank=True)
    credential_fingerprint = models.CharField(max_length=16, blank=True)
    resource = models.CharField(max_length=300, blank=True)
    instance = models.CharField(max_length=100, blank=True)
    project_id = models.UUIDField(null=True, blank=True, db_index=True)
    operation = models.CharField(max_length=64)
    target_type = models.CharField(max_length=32, blank=True)
    target_id = models.CharField(max_length=128, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    error_code = models.CharField(max_length=32, blank=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["project_id", "-occurred_at"], name="audit_project_time"),
            models.Index(fields=["project_id", "operation"], name="audit_project_operation"),
            models.Index(fields=["request_id"], name="audit_request"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.outcome} by {self.actor_type}:{self.actor_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError("Audit events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit events are append-only")
