"""audit_checkpoint: print each chain's head (events, last hash, time), one JSON object a line,
for the operator to keep outside the server; each is stored too (audit.state.chain_state).
`verify_audit --checkpoint FILE` reads these lines back."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from audit.chain import encode_time
from audit.state import take_checkpoints


class Command(BaseCommand):
    help = "Print (and store) every audit chain's head, to keep outside the server."

    def handle(self, *args: Any, **options: Any) -> None:
        for point in take_checkpoints():
            line = {
                "chain": point.chain,
                "seq": point.seq,
                "hash": point.hash,
                "time": encode_time(point.head_time),
                "taken_at": encode_time(point.taken_at),
            }
            self.stdout.write(json.dumps(line))
