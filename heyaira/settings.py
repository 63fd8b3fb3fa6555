"""Settings: one module, every deployment value from the environment (README, "Configuration").

Malformed values stop the start (see envconfig). SQLite is the default database so that a fresh
clone runs with nothing installed; set DATABASE_URL=postgres://... for PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from heyaira import quickstart_env
from heyaira.envconfig import (
    ConfigError,
    apply_debug_defaults,
    cache_from_url,
    database_from_url,
    database_limits,
    env_bool,
    env_int,
    env_list,
    env_str,
    public_url,
)
from heyaira.proxies import parse_networks

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

# After `make run`, var/quickstart.env holds its random secrets, DEBUG=true and its public URL:
# `python manage.py ...` then runs against the same secrets. Defaults only; ignored with DEBUG off.
try:
    _quickstart_file = quickstart_env.path()
    apply_debug_defaults(quickstart_env.read(_quickstart_file), source=str(_quickstart_file))
except quickstart_env.QuickstartFileError as error:
    raise ConfigError(str(error)) from None

DEBUG = env_bool("DEBUG", False)

# Development-only fallbacks (DEBUG on without the quick start's file, as for mypy): with DEBUG
# off every secret must come from the environment.
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
# The shortest lease a claim may ask for (docs/tools.md: 30 seconds). Only test servers lower
# it, so that a test of leases held for minutes can run in seconds.
HEYAIRA_LEASE_MIN_SECONDS = env_int("HEYAIRA_LEASE_MIN_SECONDS", 30, minimum=1, maximum=30)

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
_behind_tls_proxy = env_bool("HEYAIRA_BEHIND_TLS_PROXY", False)
if _behind_tls_proxy:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# The proxies whose X-Forwarded-For names the client (addresses or CIDRs, comma-separated);
# from every other peer the header is ignored (heyaira.proxies). Empty: no proxy is trusted.
try:
    HEYAIRA_TRUSTED_PROXIES = parse_networks(
        "HEYAIRA_TRUSTED_PROXIES", env_list("HEYAIRA_TRUSTED_PROXIES", [])
    )
except ValueError as error:
    raise ConfigError(str(error)) from None

# --- Limits on what one client may send (docs/operating.md, "Limits") ----------------------
# Request bodies are capped per class of path in the ASGI application, before anything reads
# them or anyone is authenticated (heyaira.bodies); a larger body is answered 413 unread.
# /mcp and the REST API: a little over their largest valid request (a task update with a full
# work receipt, every text at its cap, is under 1 MiB even with every character escaped); /mcp
# keeps its own 1 MiB ceiling too. OAuth (token, registration, revocation, consent): small
# JSON or forms. Everything else (sign-in, the admin, the pages' forms): forms.
_MiB, _KiB = 1024 * 1024, 1024
HEYAIRA_MAX_BODY_BYTES_MCP = env_int("HEYAIRA_MAX_BODY_BYTES_MCP", _MiB, minimum=_KiB, maximum=_MiB)
HEYAIRA_MAX_BODY_BYTES_API = env_int("HEYAIRA_MAX_BODY_BYTES_API", _MiB, minimum=_KiB)
HEYAIRA_MAX_BODY_BYTES_OAUTH = env_int("HEYAIRA_MAX_BODY_BYTES_OAUTH", 16 * _KiB, minimum=_KiB)
# POST /api/v1/import takes a whole project's bundle (read from a temporary file, line by line).
HEYAIRA_MAX_BODY_BYTES_IMPORT = env_int("HEYAIRA_MAX_BODY_BYTES_IMPORT", 1024 * _MiB, minimum=_KiB)
HEYAIRA_MAX_BODY_BYTES_OTHER = env_int("HEYAIRA_MAX_BODY_BYTES_OTHER", 64 * _KiB, minimum=_KiB)
# Per-client limits and counts key by the client's network (core.networks): the address for
# IPv4, this prefix of it for IPv6 (a host is usually given a /64 and may use all of it).
HEYAIRA_IPV6_NETWORK_PREFIX = env_int("HEYAIRA_IPV6_NETWORK_PREFIX", 64, minimum=32, maximum=128)
# --- end of the limits -----------------------------------------------------------------------

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "guardian",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "projects",
    "audit",
    "continuity",
    "oauth2_provider",
    "identity",
    "web",
]

MIDDLEWARE = [
    "heyaira.middleware.RequestIdMiddleware",
    "heyaira.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
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

# On PostgreSQL a per-process connection pool (psycopg_pool) by default: under ASGI every request
# runs its ORM work in a fresh thread, so per-thread persistent connections would leak, while
# opening a connection per request costs more than most operations. DATABASE_POOL_SIZE=0 turns
# it off (then DATABASE_CONN_MAX_AGE may keep connections instead).
# Database work from /mcp and the REST API runs on DATABASE_POOL_SIZE threads of its own
# (core.database), at most DATABASE_CONCURRENCY of them at once (one waiting on a lock or a
# long query stops counting after 200 ms). The work is short and mostly Python, so more at once
# only contend for the interpreter: at 32 clients on 2 workers, 4 gave the best throughput and
# p95 in bench/throughput.py (10 at once: p95 160-260 ms; 4: 110-125 ms; 2: 117-136 ms).
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 10, minimum=0)
DATABASE_CONCURRENCY = env_int("DATABASE_CONCURRENCY", 4, minimum=1)
# How long a request waits for a database thread or a pooled connection before it is answered
# `unavailable`; and, on PostgreSQL, the longest a statement may run and wait for a lock.
DATABASE_POOL_TIMEOUT_MS = env_int("DATABASE_POOL_TIMEOUT_MS", 5000, minimum=1)
DATABASE_LIMITS = database_limits(
    pool_timeout_ms=DATABASE_POOL_TIMEOUT_MS,
    statement_timeout_ms=env_int("DATABASE_STATEMENT_TIMEOUT_MS", 10000, minimum=0),
    lock_timeout_ms=env_int("DATABASE_LOCK_TIMEOUT_MS", 3000, minimum=0),
)
# DATABASE_URL names PgBouncer in transaction mode (docs/scaling.md): no session state, the
# timeouts sent per transaction instead.
DATABASE_PGBOUNCER = env_bool("DATABASE_PGBOUNCER", False)
DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL", "sqlite:///var/heyaira.sqlite3"),
        base_dir=BASE_DIR,
        pool_size=DATABASE_POOL_SIZE,
        limits=DATABASE_LIMITS,
        pgbouncer=DATABASE_PGBOUNCER,
    )
}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 0, minimum=0)
# The pool checks each connection before handing it out: after a restart, a failover or an idle
# timeout it would otherwise hand out dead ones (without a pool, persistent connections).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["OPTIONS"].get("pool") and DATABASES["default"]["CONN_MAX_AGE"]:
    raise ConfigError("DATABASE_CONN_MAX_AGE needs DATABASE_POOL_SIZE=0: a pool already keeps them")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # Django's password backend, closed for a while to an address that failed too often.
    "identity.throttle.ThrottledModelBackend",
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
# A refused CSRF check (a forged consent or sign-in POST) is audited, then answered as usual.
CSRF_FAILURE_VIEW = "identity.signin.csrf_failure"
# The front door: it shows everyone their projects, and links staff (owners, admins) to /admin/,
# which would only refuse contributors and viewers.
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
# The admin shows every time with its zone (heyaira/formats/en/formats.py).
FORMAT_MODULE_PATH = ["heyaira.formats"]
USE_I18N = True
USE_TZ = True

# The REST API (continuity.api): each view sets its authentication, parsers and renderers; the
# schema is described by continuity.api.openapi.
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HeyAira REST API",
    "DESCRIPTION": "The continuity operations of the MCP tools, as resources.",
    "VERSION": "1",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The schemas are pydantic's, kept as they are (no enum components renamed).
    "POSTPROCESSING_HOOKS": [],
    "APPEND_COMPONENTS": {
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "An OAuth access token for the .../api resource, or an API key.",
            }
        }
    },
}

STATIC_URL = "/static/"
# Filled by collectstatic (make run does it) and served by heyaira.asgi.
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))

_https = _public.scheme == "https"
SESSION_COOKIE_SECURE = _https
CSRF_COOKIE_SECURE = _https
# --- HTTPS declared (an https HEYAIRA_PUBLIC_URL): HSTS and the redirect (docs/operating.md) ---
# Browsers then refuse plain HTTP to this host for a year. includeSubDomains covers only names
# under HeyAira's own host; preload is for apex domains submitted to the browsers' list, so it
# stays off (and its deploy check silenced) unless asked for.
SECURE_HSTS_SECONDS = env_int("HEYAIRA_HSTS_SECONDS", 365 * 24 * 3600 if _https else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HEYAIRA_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("HEYAIRA_HSTS_PRELOAD", False)
# Plain-HTTP requests are redirected to https only where the scheme can be told: behind a TLS
# proxy that says so (HEYAIRA_BEHIND_TLS_PROXY), else every request would look plain and loop.
# Health probes reach the app directly, over plain HTTP.
SECURE_SSL_REDIRECT = env_bool("HEYAIRA_SSL_REDIRECT", _https and _behind_tls_proxy)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SILENCED_SYSTEM_CHECKS = [
    # http redirect URIs are accepted for loopback hosts only (native clients, RFC 8252);
    # identity.policy refuses every other http one, which this check cannot see.
    "oauth2_provider.W008",
    *([] if SECURE_HSTS_PRELOAD else ["security.W021"]),
]
# --- end of HTTPS ------------------------------------------------------------------------------
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
        # oauthlib logs authorization codes and refresh tokens at DEBUG, and DOT logs the
        # redirect URL that carries the code: never let either through, whatever LOG_LEVEL says.
        "oauthlib": {"level": "WARNING"},
        "oauth2_provider": {"level": "INFO"},
    },
}

# Invitations to a project (projects.invitations): how long a link works.
HEYAIRA_INVITATION_TTL_HOURS = env_int("HEYAIRA_INVITATION_TTL_HOURS", 72, minimum=1)
# Mail, for invitations: SMTP when EMAIL_HOST is set, the console (the server's output) with
# DEBUG on, else none: the invitation page then shows the link to pass on. EMAIL_BACKEND names
# another Django backend (docs/operating.md).
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not env_bool("EMAIL_USE_SSL", False))
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ConfigError("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be true; pick the server's one")
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT_SECONDS", 10, minimum=1)
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", f"HeyAira <heyaira@{_public_host}>")
_MAIL_BACKENDS = "django.core.mail.backends"
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    f"{_MAIL_BACKENDS}.smtp.EmailBackend"
    if EMAIL_HOST
    else f"{_MAIL_BACKENDS}.console.EmailBackend"
    if DEBUG
    else f"{_MAIL_BACKENDS}.dummy.EmailBackend",
)

# Rate-limit counters (sign-in, client registration) live in the cache. The default is per
# process; with several workers or hosts set CACHE_URL=redis://... so the limits are shared.
CACHES = {"default": cache_from_url(env_str("CACHE_URL", "locmem://"))}

# OAuth 2.1 (docs/oauth.md). All five DOT models are swapped into
# the identity app (label oauth) so that grants and tokens carry their project.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth.Grant"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth.AccessToken"  # noqa: S105 (a model name)
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth.RefreshToken"  # noqa: S105 (a model name)
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth.IDToken"  # noqa: S105 (a model name)

# Anonymous dynamic client registrations allowed per source address per hour.
HEYAIRA_DCR_RATE_LIMIT_PER_HOUR = env_int("HEYAIRA_DCR_RATE_LIMIT_PER_HOUR", 20, minimum=1)
# Failed sign-ins one source address may make in 15 minutes before sign-in is refused there.
HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW = env_int("HEYAIRA_SIGN_IN_FAILURES_PER_WINDOW", 10, minimum=1)

OAUTH2_PROVIDER = {
    "OAUTH2_SERVER_CLASS": "identity.server.HeyAiraServer",
    "OAUTH2_VALIDATOR_CLASS": "identity.validators.HeyAiraValidator",
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 900,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    # Idle expiry; the absolute 30-day family lifetime is identity.policy's.
    "REFRESH_TOKEN_EXPIRE_SECONDS": 14 * 24 * 3600,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # Must stay 0 with hashed token storage (a grace answer would be an empty token).
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "SCOPES": {
        "continuity:read": "Read the project's memory, tasks, work receipts and identity",
        "continuity:write": "Add memory, create and update tasks, record work receipts",
        "audit:read": "Read the project's audit log",
    },
    # Clients often omit scope: they then get the least.
    "DEFAULT_SCOPES": ["continuity:read"],
    "REQUEST_APPROVAL_PROMPT": "force",
    "OIDC_ISS_ENDPOINT": HEYAIRA_PUBLIC_URL,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
    "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": HEYAIRA_MCP_RESOURCE,
    "OAUTH2_PROTECTED_RESOURCE_NAME": "HeyAira",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
}

# ---- Client registration (DCR and client ID metadata documents) and the refresh window -------
# docs/oauth.md says what each does; docs/operating.md lists them for operators.
#
# Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a client whose
# client_id is an https URL is described by the JSON document at that URL, fetched by
# identity.cimd (https only, no redirects, DNS resolved once and pinned, at most 5 KB, 3 s).
HEYAIRA_CIMD_ENABLED = env_bool("HEYAIRA_CIMD_ENABLED", True)
# Hosts whose documents may live on loopback, private or link-local addresses (an internal
# client registry, or a test); every other host must resolve to public addresses only.
HEYAIRA_CIMD_PRIVATE_HOSTS = env_list("HEYAIRA_CIMD_PRIVATE_HOSTS", [])
if "*" in HEYAIRA_CIMD_PRIVATE_HOSTS:
    raise ConfigError("HEYAIRA_CIMD_PRIVATE_HOSTS names hosts; '*' would let anyone reach inside")
# A PEM file of the certificate authorities trusted when fetching documents, instead of the
# system's (an internal CA); empty: the system's trust store.
HEYAIRA_CIMD_CA_BUNDLE = env_str("HEYAIRA_CIMD_CA_BUNDLE", "")
if HEYAIRA_CIMD_CA_BUNDLE and not Path(HEYAIRA_CIMD_CA_BUNDLE).is_file():
    raise ConfigError(f"HEYAIRA_CIMD_CA_BUNDLE={HEYAIRA_CIMD_CA_BUNDLE!r} is not a file")
OAUTH2_PROVIDER.update(
    {
        "CIMD_ENABLED": HEYAIRA_CIMD_ENABLED,
        "CIMD_METADATA_FETCHER": "identity.cimd.fetch.PinnedFetcher",
        "CIMD_REGISTRATION_PERMISSION_CLASSES": ("identity.cimd.limits.RegistrationLimits",),
        "CIMD_FETCH_TIMEOUT_SECONDS": 3,
        "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
        # Cache-Control max-age is honoured between these bounds (no-store: the floor).
        "CIMD_METADATA_MIN_AGE_SECONDS": 300,
        "CIMD_METADATA_MAX_AGE_SECONDS": 24 * 3600,
        "CIMD_FAILURE_BACKOFF_SECONDS": 60,
        "CIMD_MAX_CONCURRENT_FETCHES": 10,
    }
)
# Registered clients (DCR or CIMD) that never obtained a token are removed this many hours
# after registration (`manage.py purge_oauth`, and on the way when the cap below is reached).
HEYAIRA_UNUSED_CLIENT_HOURS = env_int("HEYAIRA_UNUSED_CLIENT_HOURS", 24, minimum=1)
# At most this many such never-used clients at once, whatever their source network: past it,
# registration answers 429 until some are used or removed.
HEYAIRA_UNUSED_CLIENTS_MAX = env_int("HEYAIRA_UNUSED_CLIENTS_MAX", 5000, minimum=1)
# A refresh token presented again within this many seconds of its rotation (a client refreshing
# on two connections at once) gets the same answer as the first use; later, it is reuse and
# revokes the whole family. 0 treats every second use as reuse.
HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS = env_int(
    "HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS", 10, minimum=0
)
if HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS > 60:
    raise ConfigError("HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS must be at most 60 (seconds)")
# ---- end of client registration and the refresh window ----------------------------------------
