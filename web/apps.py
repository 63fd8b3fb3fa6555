from django.apps import AppConfig


class WebConfig(AppConfig):
    """The pages people use: the front door (later the dashboard, audit UI, connected apps)."""

    name = "web"
    default_auto_field = "django.db.models.BigAutoField"
