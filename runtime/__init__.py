"""How the application runs: the gunicorn worker and its shared load table, the heap settings of a
serving worker, the database units of the async transports (run_orm), a body read ahead and
replayed to the application, the REST API's one-hop handler, the pool's connection check and the
PostgreSQL backend for PgBouncer.

Below the apps that serve requests (continuity, identity, projects) and the project glue
(heyaira/), above core's foundations and audit.
"""
