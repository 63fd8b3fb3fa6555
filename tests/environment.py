"""Loaded by pytest before Django starts (-p tests.environment): the settings a test run needs
when the caller did not give them. Real deployments get these from their environment."""

import os

os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production-0123456789")
os.environ.setdefault("HEYAIRA_API_KEY_PEPPER", "test-api-key-pepper-not-for-production-0123")
os.environ.setdefault("HEYAIRA_PUBLIC_URL", "http://testserver")
os.environ.setdefault("HEYAIRA_INSTANCE", "test")
os.environ.setdefault("LOG_LEVEL", "WARNING")
# In-process tests use plain connections: the concurrency tests need one real connection per
# thread. Live servers (tests/live.py) run with the default pool, as production does.
os.environ.setdefault("DATABASE_POOL_SIZE", "0")
