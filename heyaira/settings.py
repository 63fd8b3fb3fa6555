"""HeyAira settings: one module, every deployment value from the environment (DESIGN section 8).

Malformed values stop the start (see envconfig). SQLite is the default database so that a fresh
clone runs with nothing installed; set DATABASE_URL=postgres://... for PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from heyaira.envconfig import (
    ConfigError,
    database_from_url,
    env_bool,
    env_int,
    env_list,
    env_str,
    public_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", False)

# Development-only fallbacks: with DEBUG off every secret must come from the environment.
_DEV_SECRET_KEY = "insecure-development-only-secret-key-change-me-0123456789"  # noqa: S105
_DEV_API_KEY_PEPPER = "insecure-development-only-api-key-pepper-0123456789abcdef"
SECRET_KEY = env_str("SECRET_KEY", _DEV_SECRET_KEY if DEBUG else None)
if not DEBUG and SECRET_KEY == _DEV_SECRET_KEY:
    raise ConfigError("SECRET_KEY must be set to a private value when DEBUG is off")

HEYAIRA_PUBLIC_URL = public_url("HEYAIRA_PUBLIC_URL", "http://127.0.0.1:8000")
HEYAIRA_INSTANCE = env_str("HEYAIRA_INSTANCE", "local")
HEYAIRA_MCP_RESOURCE = f"{HEYAIRA_PUBLIC_URL}/mcp"
HEYAIRA_API_RESOURCE = f"{HEYAIRA_PUBLIC_URL}/api"
# Keyed hashes of API keys use their own pepper so that rotating SECRET_KEY voids no key.
HEYAIRA_API_KEY_PEPPER = env_str("HEYAIRA_API_KEY_PEPPER", _DEV_API_KEY_PEPPER if DEBUG else None)
# Idempotency keys are honoured for at least this long; purge_idempotency never goes below it.
HEYAIRA_IDEMPOTENCY_RETENTION_HOURS = env_int("HEYAIRA_IDEMPOTENCY_RETENTION_HOURS", 24, minimum=24)

_public = urlsplit(HEYAIRA_PUBLIC_URL)
_public_host = _public.hostname or "127.0.0.1"
_default_hosts = [_public_host]
if DEBUG:
    _default_hosts += ["localhost", "127.0.0.1", "[::1]"]
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", sorted(set(_default_hosts)))
_public_origin = f"{_public.scheme}://{_public.netloc}"
CSRF_TRUSTED_ORIGINS = [_public_origin]
# Browser-based MCP clients send an Origin; any other origin is refused (DNS rebinding).
HEYAIRA_MCP_ALLOWED_ORIGINS = env_list("HEYAIRA_MCP_ALLOWED_ORIGINS", [_public_origin])

# Behind a TLS-terminating proxy the scheme comes from this header; without it every audience
# check against an https resource would fail.
if env_bool("HEYAIRA_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "guardian",
    "projects",
    "audit",
    "continuity",
]

MIDDLEWARE = [
    "heyaira.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "heyaira.urls"
ASGI_APPLICATION = "heyaira.asgi.application"
WSGI_APPLICATION = "heyaira.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL", "sqlite:///var/heyaira.sqlite3"), base_dir=BASE_DIR
    )
}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 0, minimum=0)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# No guardian "AnonymousUser" row: anonymous callers never hold object permissions here.
ANONYMOUS_USER_NAME = None

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/admin/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
WHITENOISE_USE_FINDERS = DEBUG

_https = _public.scheme == "https"
SESSION_COOKIE_SECURE = _https
CSRF_COOKIE_SECURE = _https
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django logs 4xx responses with the request path; keep warnings, they never carry
        # bodies or headers.
        "django.request": {"level": "ERROR"},
    },
}
