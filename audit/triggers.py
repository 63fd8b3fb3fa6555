"""The database side of the audit log: the chain link made at INSERT, and append-only.

PostgreSQL:
- BEFORE INSERT on each event: upsert the chain's head row (`INSERT ... ON CONFLICT DO UPDATE`
  both takes the head's row lock, held until COMMIT, and reads it), then set the event's `seq`,
  `prev_hash` and `hash` from it. Concurrent writers of one chain queue on that row, so the
  chain cannot fork, and the application issues the same single INSERT it always did. The
  function is SECURITY DEFINER: the application's role needs no privilege on the head table.
- BEFORE UPDATE OR DELETE (per row) and BEFORE TRUNCATE on the events: refused. The head may only
  advance by one, linked to its last hash; it is never deleted or truncated.

SQLite (the quick start) gets the same chain link AFTER INSERT (its triggers cannot change NEW:
the one UPDATE they allow is the link of a row that has none yet), and refuses every other
UPDATE and every DELETE. Its hash function is registered on each connection (audit.apps).
"""

from __future__ import annotations

from typing import Any

EVENTS = "audit_auditevent"
HEAD = "audit_auditchainhead"
SQLITE_HASH_FUNCTION = "heyaira_chain_hash"


def _pg_hash(prev: str, seq: str, digest: str) -> str:
    """chain.chain_hash in SQL: sha256 over prev || '\\n' || seq || '\\n' || digest, as hex."""
    text = f"{prev} || E'\\n' || ({seq})::text || E'\\n' || {digest}"
    return f"encode(sha256(convert_to({text}, 'UTF8')), 'hex')"


# Table names are constants of this module, never input: S608 does not apply.
# The chain link at INSERT. A row that comes linked already (seq set) is an event of an archived
# chain that project_import brings in (continuity.bundle) when its chain has no head here yet:
# it must link to the event before it, with the hash of its link, and audit_chain_adopt then
# makes the chain's head, once. Into a chain that has a head, a position the INSERT names is
# not taken: the row gets the next place, as every row does. (Linking a million imported rows
# through the head would update one row a million times in one transaction, and each update
# walks the versions before it.)
CHAIN_APPEND = f"""
CREATE OR REPLACE FUNCTION audit_chain_append() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    head {HEAD}%ROWTYPE;
    before text;
BEGIN
    IF NEW.seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {HEAD} WHERE chain = NEW.chain) THEN
        IF NEW.seq = 1 THEN
            before := '';
        ELSE
            SELECT hash INTO before FROM {EVENTS} WHERE chain = NEW.chain AND seq = NEW.seq - 1;
        END IF;
        IF before IS NULL OR NEW.prev_hash IS DISTINCT FROM before
                OR NEW.hash IS DISTINCT FROM {_pg_hash("NEW.prev_hash", "NEW.seq", "NEW.digest")}
        THEN
            RAISE EXCEPTION 'audit event % of chain % does not link to the one before it',
                NEW.seq, NEW.chain USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END IF;
    INSERT INTO {HEAD} AS h (chain, seq, prev_hash, last_hash, last_time)
    VALUES (NEW.chain, 1, '', {_pg_hash("''", "1", "NEW.digest")}, NEW.occurred_at)
    ON CONFLICT (chain) DO UPDATE SET
        seq = h.seq + 1,
        prev_hash = h.last_hash,
        last_hash = {_pg_hash("h.last_hash", "h.seq + 1", "NEW.digest")},
        last_time = NEW.occurred_at
    RETURNING * INTO head;
    NEW.seq := head.seq;
    NEW.prev_hash := head.prev_hash;
    NEW.hash := head.last_hash;
    RETURN NEW;
END $$"""  # noqa: S608

# The head of a chain whose events came linked (above): its last event, once.
CHAIN_ADOPT = f"""
CREATE OR REPLACE FUNCTION audit_chain_adopt(name text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
    last {EVENTS}%ROWTYPE;
    before text;
BEGIN
    SELECT * INTO last FROM {EVENTS} WHERE chain = name ORDER BY seq DESC LIMIT 1;
    IF last.seq IS NULL THEN
        RETURN 0;
    END IF;
    before := coalesce(last.prev_hash, '');
    INSERT INTO {HEAD} (chain, seq, prev_hash, last_hash, last_time)
    VALUES (name, last.seq, before, last.hash, last.occurred_at);
    RETURN last.seq;
END $$"""  # noqa: S608

POSTGRES_INSTALL = [
    CHAIN_APPEND,
    CHAIN_ADOPT,
    """
CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit rows are append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END $$""",
    """
CREATE OR REPLACE FUNCTION audit_head_advance_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain <> OLD.chain OR NEW.seq <> OLD.seq + 1 OR NEW.prev_hash <> OLD.last_hash THEN
        RAISE EXCEPTION 'an audit chain head only advances by one linked event'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$""",
    f"""CREATE TRIGGER audit_chain_append BEFORE INSERT ON {EVENTS}
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append()""",
    f"""CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON {EVENTS}
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change()""",
    f"""CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON {EVENTS}
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change()""",
    f"""CREATE TRIGGER audit_head_advance_only BEFORE UPDATE ON {HEAD}
    FOR EACH ROW EXECUTE FUNCTION audit_head_advance_only()""",
    f"""CREATE TRIGGER audit_head_kept BEFORE DELETE ON {HEAD}
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change()""",
    f"""CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON {HEAD}
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change()""",
]

POSTGRES_UNINSTALL = [
    f"DROP TRIGGER IF EXISTS audit_chain_append ON {EVENTS}",
    f"DROP TRIGGER IF EXISTS audit_append_only ON {EVENTS}",
    f"DROP TRIGGER IF EXISTS audit_no_truncate ON {EVENTS}",
    f"DROP TRIGGER IF EXISTS audit_head_advance_only ON {HEAD}",
    f"DROP TRIGGER IF EXISTS audit_head_kept ON {HEAD}",
    f"DROP TRIGGER IF EXISTS audit_head_no_truncate ON {HEAD}",
    "DROP FUNCTION IF EXISTS audit_chain_append()",
    "DROP FUNCTION IF EXISTS audit_chain_adopt(text)",
    "DROP FUNCTION IF EXISTS audit_refuse_change()",
    "DROP FUNCTION IF EXISTS audit_head_advance_only()",
]

_H = SQLITE_HASH_FUNCTION
SQLITE_INSTALL = [
    f"""CREATE TRIGGER audit_chain_append AFTER INSERT ON {EVENTS}
BEGIN
    INSERT INTO {HEAD} (chain, seq, prev_hash, last_hash, last_time)
    VALUES (NEW.chain, 1, '', {_H}('', 1, NEW.digest), NEW.occurred_at)
    ON CONFLICT (chain) DO UPDATE SET
        seq = seq + 1, prev_hash = last_hash, last_hash = {_H}(last_hash, seq + 1, NEW.digest),
        last_time = NEW.occurred_at;
    UPDATE {EVENTS} SET (seq, prev_hash, hash) =
        (SELECT seq, prev_hash, last_hash FROM {HEAD} WHERE chain = NEW.chain)
    WHERE rowid = NEW.rowid;
END""",  # noqa: S608
    f"""CREATE TRIGGER audit_append_only BEFORE UPDATE ON {EVENTS} WHEN OLD.seq IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: UPDATE refused'); END""",
    f"""CREATE TRIGGER audit_no_delete BEFORE DELETE ON {EVENTS}
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: DELETE refused'); END""",
    f"""CREATE TRIGGER audit_head_advance_only BEFORE UPDATE ON {HEAD}
    WHEN NEW.chain <> OLD.chain OR NEW.seq <> OLD.seq + 1 OR NEW.prev_hash <> OLD.last_hash
BEGIN SELECT RAISE(ABORT, 'an audit chain head only advances by one linked event'); END""",
    f"""CREATE TRIGGER audit_head_kept BEFORE DELETE ON {HEAD}
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: DELETE refused'); END""",
]

SQLITE_UNINSTALL = [
    "DROP TRIGGER IF EXISTS audit_chain_append",
    "DROP TRIGGER IF EXISTS audit_append_only",
    "DROP TRIGGER IF EXISTS audit_no_delete",
    "DROP TRIGGER IF EXISTS audit_head_advance_only",
    "DROP TRIGGER IF EXISTS audit_head_kept",
]

INSTALL = {"postgresql": POSTGRES_INSTALL, "sqlite": SQLITE_INSTALL}
UNINSTALL = {"postgresql": POSTGRES_UNINSTALL, "sqlite": SQLITE_UNINSTALL}


def install(connection: Any) -> None:
    with connection.cursor() as cursor:
        for statement in INSTALL.get(connection.vendor, []):
            cursor.execute(statement)


def uninstall(connection: Any) -> None:
    with connection.cursor() as cursor:
        for statement in UNINSTALL.get(connection.vendor, []):
            cursor.execute(statement)


def register_sqlite_function(connection: Any) -> None:
    """The chain hash for SQLite's trigger (audit.chain.chain_hash), on a new connection."""
    from audit.chain import chain_hash

    if connection.vendor == "sqlite":
        connection.connection.create_function(
            SQLITE_HASH_FUNCTION, 3, _sqlite_hash(chain_hash), deterministic=True
        )


def _sqlite_hash(chain_hash: Any) -> Any:
    def hash_of(prev: str | None, seq: int, digest: str | None) -> str:
        return str(chain_hash(prev or "", int(seq), digest or ""))

    return hash_of
