"""HeyAira's OAuth 2.1 authorization server, built on django-oauth-toolkit.

Tokens here are bound to (user, project, audience, scopes); see docs/architecture.md ("The
tenancy rule") and docs/oauth.md for what every setting adds up to.
"""
