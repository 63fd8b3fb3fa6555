"""The invitation mail, sent through Django's email backend after the invitation is committed.

Which backend: SMTP when EMAIL_HOST is set, the console (the server's own output) with DEBUG
on, else none (settings; docs/operating.md). Whatever happens, the inviter's page shows the link
too, so a team without mail passes it on by hand. A failure to send is logged without the link.
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import send_mail

from core.access import Role
from projects.models import Invitation

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Delivery:
    """What became of the mail, said to the inviter."""

    sent: bool
    said: str


def delivery_backend() -> str:
    return str(settings.EMAIL_BACKEND).rsplit(".", 2)[-2]  # smtp, console, dummy, filebased...


def invitation_text(invitation: Invitation, link: str) -> tuple[str, str]:
    project = invitation.project
    role = Role(invitation.role).label.lower()
    until = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    subject = f"{invitation.invited_by_label} invites you to {project.name} on HeyAira"
    body = "\n".join(
        [
            f"{invitation.invited_by_label} invites you to join the project {project.name} "
            f"({project.slug}) as {role} on HeyAira, {settings.HEYAIRA_PUBLIC_URL}.",
            "",
            f"Open this link to accept. It works once, until {until}:",
            "",
            link,
            "",
            "New to HeyAira? The link lets you choose a username and a password. Already have "
            "an account? Sign in when the page asks.",
            "",
            "If you did not expect this invitation, ignore this mail: nothing happens.",
        ]
    )
    return subject, body


def send_invitation(invitation: Invitation, link: str) -> Delivery:
    backend = delivery_backend()
    if backend == "dummy":
        return Delivery(
            sent=False,
            said="This server sends no mail (EMAIL_HOST is not set): copy the link below and "
            "send it to them yourself.",
        )
    subject, body = invitation_text(invitation, link)
    try:
        send_mail(subject, body, None, [invitation.email], fail_silently=False)
    except (smtplib.SMTPException, OSError) as error:
        # The link is in the mail, never in the log: say only what failed.
        logger.warning("invitation %s: the mail was not sent (%s)", invitation.pk, type(error))
        return Delivery(
            sent=False,
            said=f"The mail could not be sent ({type(error).__name__}): copy the link below "
            "and send it to them yourself.",
        )
    if backend == "console":
        return Delivery(
            sent=True,
            said="The mail went to the server's console (a development server without a mail "
            "server): copy the link below if they cannot see it.",
        )
    return Delivery(sent=True, said=f"We mailed the link to {invitation.email}.")
