"""The one ASGI application: Django for everything, the MCP endpoint at /mcp (added later)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
application = get_asgi_application()
