"""Bounded reads for the pages: each takes the project from web.access, never from the URL."""
