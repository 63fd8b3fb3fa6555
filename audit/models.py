"""The audit log: who tried what, allowed or rejected. Never bodies, tokens or contents."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django.utils import timezone


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
    # The event's own time, set when it happens: a row that waited for the database keeps it.
    occurred_at = models.DateTimeField(default=timezone.now, db_index=True)
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
    # The hash chain (audit.chain): the recorder sets `chain` and `digest`; the database's
    # trigger sets the position and the links under the chain head's row lock (migration 0005).
    chain = models.CharField(max_length=40, default="", editable=False)
    digest = models.CharField(max_length=64, default="", editable=False)
    seq = models.BigIntegerField(null=True, blank=True, editable=False)
    prev_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    hash = models.CharField(max_length=64, blank=True, default="", editable=False)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["project_id", "-occurred_at"], name="audit_project_time"),
            models.Index(fields=["project_id", "operation"], name="audit_project_operation"),
            # The audit list's target and actor filters (an actor is a label or an id), newest
            # first within each; built concurrently on PostgreSQL (migration 0007).
            models.Index(
                fields=["project_id", "target_id", "-occurred_at"], name="audit_project_target"
            ),
            models.Index(
                fields=["project_id", "actor_label", "-occurred_at"],
                name="audit_project_actor_label",
            ),
            models.Index(
                fields=["project_id", "actor_id", "-occurred_at"], name="audit_project_actor_id"
            ),
            models.Index(fields=["request_id"], name="audit_request"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["chain", "seq"], name="audit_chain_position"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.outcome} by {self.actor_type}:{self.actor_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise TypeError("Audit events are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit events are append-only")


class AuditChainHead(models.Model):
    """The end of one chain: its length, last hash and time. Its row is the chain's lock: the
    insert trigger upserts it (locking it until COMMIT) and links the new event to it."""

    chain = models.CharField(max_length=40, primary_key=True)
    seq = models.BigIntegerField()
    prev_hash = models.CharField(max_length=64, blank=True)
    last_hash = models.CharField(max_length=64)
    last_time = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.chain} at {self.seq}"


class AuditVerification(models.Model):
    """The result of one `verify_audit` run over one chain."""

    chain = models.CharField(max_length=40)
    ran_at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    # Every event up to this position verified (0: none); its hash.
    verified_seq = models.BigIntegerField()
    verified_hash = models.CharField(max_length=64, blank=True)
    head_seq = models.BigIntegerField()
    problem = models.CharField(max_length=300, blank=True)

    class Meta:
        indexes = [models.Index(fields=["chain", "-ran_at"], name="audit_verification_chain")]

    def __str__(self) -> str:
        return f"{self.chain} verified to {self.verified_seq}"


class AuditCheckpoint(models.Model):
    """A chain's head as `audit_checkpoint` printed it, for the operator to keep elsewhere."""

    chain = models.CharField(max_length=40)
    seq = models.BigIntegerField()
    hash = models.CharField(max_length=64)
    head_time = models.DateTimeField()
    taken_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["chain", "-taken_at"], name="audit_checkpoint_chain")]

    def __str__(self) -> str:
        return f"{self.chain} at {self.seq}"


class AnonymousRejection(models.Model):
    """Rejections without a valid credential, counted per source, operation, reason and time
    window (audit.noise) instead of a row each: a flood costs an UPDATE, not a row."""

    window_start = models.DateTimeField()
    source = models.CharField(max_length=64)
    operation = models.CharField(max_length=64)
    reason = models.CharField(max_length=32)
    count = models.BigIntegerField(default=0)
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["window_start", "source", "operation", "reason"],
                name="audit_noise_bucket",
            )
        ]
        indexes = [models.Index(fields=["-window_start"], name="audit_noise_window")]

    def __str__(self) -> str:
        return f"{self.count} x {self.operation} {self.reason} from {self.source}"


class CountedEvent(models.Model):
    """Events of a known actor counted per time window instead of stored one by one
    (audit.noise): a known credential refused again and again (a revoked key still in use),
    wrong passwords for an account, and people's page views. The first of each bucket is an
    audit event in `chain`; the count says how many there were in all, that one included."""

    window_start = models.DateTimeField()
    # The audit chain its first event went to: its project's id, or "security" (audit.chain).
    chain = models.CharField(max_length=40)
    # Who, without any secret: "api_key:<fingerprint>", "oauth_token:<fingerprint>",
    # "user:<id>".
    subject = models.CharField(max_length=64)
    operation = models.CharField(max_length=64)
    # The rejection's error code, or the page that was read.
    reason = models.CharField(max_length=64)
    count = models.BigIntegerField(default=0)
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["window_start", "chain", "subject", "operation", "reason"],
                name="audit_counted_bucket",
            )
        ]
        indexes = [
            models.Index(fields=["-window_start"], name="audit_counted_window"),
            models.Index(fields=["chain", "-window_start"], name="audit_counted_chain"),
        ]

    def __str__(self) -> str:
        return f"{self.count} x {self.operation} {self.reason} by {self.subject}"
