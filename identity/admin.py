"""django-oauth-toolkit lists its five models in the admin. HeyAira issues no OpenID Connect ID
tokens (OIDC stays off), so that table is always empty and is not listed; applications, grants
and access and refresh tokens are in use and stay."""

from __future__ import annotations

from django.contrib import admin
from oauth2_provider.models import get_id_token_model

admin.site.unregister(get_id_token_model())
