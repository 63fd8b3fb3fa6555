"""Signals other apps listen to without projects importing them."""

from django.dispatch import Signal

# Sent inside the transaction that removes a membership, with project and user_id: every
# credential that user holds for that project must stop working at once.
membership_ended = Signal()
