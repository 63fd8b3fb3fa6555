from django.apps import AppConfig


class OAuthConfig(AppConfig):
    name = "identity"
    label = "oauth"
    verbose_name = "OAuth"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Receivers: sign-in failures, and credential revocation on membership changes.
        from identity import revocation, signin

        signin.connect_receivers()
        revocation.connect_receivers()
