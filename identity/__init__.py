"""HeyAira's OAuth 2.1 authorization server, built on django-oauth-toolkit.

Tokens here are bound to (user, project, audience, scopes); see DESIGN sections 4 and 6 and
shared/OAUTH.md for the decisions behind every setting.
"""
