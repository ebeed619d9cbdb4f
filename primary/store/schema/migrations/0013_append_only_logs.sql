-- 0013: the audit log and the continuations outbox are append-only by construction, and on
-- SQLite their ids come from the rowid instead of AUTOINCREMENT.
--
-- Both tables promise ids that only grow and are never reused: readers page the audit log and
-- resume the outbox by id. AUTOINCREMENT kept that promise on SQLite by writing the table's
-- high mark to sqlite_sequence in every inserting transaction, one more page for each approval
-- decision and each job's end. A rowid is the largest one plus one, so it is never reused as
-- long as no row is deleted; the triggers make deleting a row an error, which keeps the
-- promise without the extra write. PostgreSQL's identity columns never reuse a value; its
-- tables are left as they are.
{{if not postgres}}
CREATE TABLE audit_log_next (
  id      INTEGER PRIMARY KEY,
  at      INTEGER NOT NULL,
  actor   TEXT    NOT NULL CHECK (actor <> ''),
  action  TEXT    NOT NULL CHECK (action <> ''),
  subject TEXT    NOT NULL,
  detail  TEXT    NOT NULL CHECK {{json_is "detail" "object"}}
) STRICT;
INSERT INTO audit_log_next (id, at, actor, action, subject, detail)
  SELECT id, at, actor, action, subject, detail FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_next RENAME TO audit_log;
CREATE INDEX audit_log_subject ON audit_log (subject, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE TRIGGER audit_log_append_only BEFORE DELETE ON audit_log
BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TABLE continuations_next (
  id              INTEGER PRIMARY KEY,
  idempotency_key TEXT    NOT NULL UNIQUE CHECK ({{octets "idempotency_key"}} BETWEEN 1 AND 256),
  channel         TEXT    NOT NULL CHECK (channel <> ''),
  thread          TEXT    NOT NULL,
  text            TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  delivered_count INTEGER NOT NULL DEFAULT 0,
  acked_at        INTEGER,
  post            {{flag "post"}},
  checkpoint      BLOB
) STRICT;
INSERT INTO continuations_next (id, idempotency_key, channel, thread, text, created_at, delivered_count,
    acked_at, post, checkpoint)
  SELECT id, idempotency_key, channel, thread, text, created_at, delivered_count, acked_at, post, checkpoint
  FROM continuations;
DROP TABLE continuations;
ALTER TABLE continuations_next RENAME TO continuations;
CREATE INDEX continuations_pending ON continuations (id) WHERE acked_at IS NULL;
CREATE TRIGGER continuations_append_only BEFORE DELETE ON continuations
BEGIN
  SELECT RAISE(ABORT, 'continuations is append-only');
END;
{{end}}
