# gunicorn reads this file from the directory it starts in (or give it with -c).
#
# Client addresses: HEYAIRA_TRUSTED_PROXIES alone decides whose X-Forwarded-For counts
# (heyaira/proxies.py). uvicorn's worker would otherwise trust that header from 127.0.0.1 by
# default and rewrite the peer first; trusting no address here turns that off. Do not pass
# --forwarded-allow-ips: set HEYAIRA_TRUSTED_PROXIES instead (docs/operating.md).
forwarded_allow_ips = ""


def on_starting(server: object) -> None:
    """Read the settings once in the master, before any worker starts: a missing secret is then
    the one-line message and exit status 4, not workers failing to boot while gunicorn's own
    shutdown races them (which sometimes printed a traceback)."""
    import os

    from django.conf import settings

    from heyaira.envconfig import or_exit_on_config_error

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
    or_exit_on_config_error(lambda: settings.SECRET_KEY)
