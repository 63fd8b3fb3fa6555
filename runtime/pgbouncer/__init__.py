"""A PostgreSQL backend for running behind PgBouncer in transaction mode (docs/scaling.md)."""
