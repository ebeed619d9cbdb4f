-- 0001: the continuations outbox, conversation modes and the audit log.
-- Times are Unix nanoseconds (UTC). Tables are STRICT: a value of the wrong type is an error.

CREATE TABLE continuations (
  id              INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: ids increase in enqueue order
  idempotency_key TEXT    NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 256),
  channel         TEXT    NOT NULL CHECK (channel <> ''),
  thread          TEXT    NOT NULL,
  text            TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  delivered_count INTEGER NOT NULL DEFAULT 0,
  acked_at        INTEGER
) STRICT;

-- What Subscribe reads: the pending ones, in id order.
CREATE INDEX continuations_pending ON continuations (id) WHERE acked_at IS NULL;

CREATE TABLE conversation_modes (
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  mode       TEXT    NOT NULL CHECK (mode IN ('ask', 'auto', 'admin')),
  updated_at INTEGER NOT NULL,
  updated_by TEXT    NOT NULL CHECK (updated_by <> ''),
  PRIMARY KEY (channel, thread)
) STRICT;

CREATE TABLE audit_log (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  at      INTEGER NOT NULL,
  actor   TEXT    NOT NULL CHECK (actor <> ''),
  action  TEXT    NOT NULL CHECK (action <> ''),
  subject TEXT    NOT NULL,
  detail  TEXT    NOT NULL CHECK (json_valid(detail) AND json_type(detail) = 'object')
) STRICT;

CREATE INDEX audit_log_subject ON audit_log (subject, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
