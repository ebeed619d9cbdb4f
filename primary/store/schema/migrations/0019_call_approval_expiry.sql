-- 0019: a call approval nobody decided in time expires: waiting → expired, an end state with
-- no decider (decided_by empty, decided_at NULL) and its settled_at the moment it expired.
--
-- The CHECKs that tie each state to its columns change with it. SQLite cannot alter a CHECK,
-- so it rebuilds the table (ids kept, so AUTOINCREMENT's high mark follows the rows);
-- PostgreSQL drops the CHECKs that name the status, whatever names the schema that created
-- them gave them, and adds the new ones.
{{if not postgres}}
CREATE TABLE call_approvals_next (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  call_id       TEXT    NOT NULL CHECK (length(call_id) = 36),
  toolkit       TEXT    NOT NULL CHECK (toolkit <> ''),
  function      TEXT    NOT NULL CHECK (function <> ''),
  arguments     TEXT    NOT NULL CHECK {{json_is "arguments" "object"}},
  bash_call_id  TEXT    NOT NULL,
  response_id   TEXT    NOT NULL CHECK (response_id <> ''),
  agent         TEXT    NOT NULL CHECK (agent <> ''),
  requester     TEXT    NOT NULL,
  channel       TEXT    NOT NULL,
  thread        TEXT    NOT NULL,
  worker_key    TEXT    NOT NULL,
  checkpoint    BLOB    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('waiting', 'approved', 'claimed', 'done', 'interrupted', 'denied', 'expired')),
  created_at    INTEGER NOT NULL,
  decided_by    TEXT    NOT NULL DEFAULT '',
  decided_at    INTEGER,
  note          TEXT    NOT NULL DEFAULT '',
  claimed_at    INTEGER,
  result_status TEXT    NOT NULL DEFAULT '' CHECK (result_status IN ('', 'completed', 'failed', 'cancelled')),
  outcome       TEXT    NOT NULL DEFAULT '',
  settled_at    INTEGER,
  CHECK ((status IN ('waiting', 'expired')) = (decided_at IS NULL)),
  CHECK ((status IN ('waiting', 'expired')) = (decided_by = '')),
  CHECK ((status IN ('claimed', 'done', 'interrupted')) = (claimed_at IS NOT NULL)),
  CHECK ((status IN ('done', 'interrupted')) = (result_status <> '')),
  CHECK ((status IN ('done', 'interrupted', 'denied', 'expired')) = (settled_at IS NOT NULL)),
  UNIQUE (response_id, call_id)
) STRICT;
INSERT INTO call_approvals_next (id, call_id, toolkit, function, arguments, bash_call_id, response_id, agent,
    requester, channel, thread, worker_key, checkpoint, status, created_at, decided_by, decided_at, note, claimed_at,
    result_status, outcome, settled_at)
  SELECT id, call_id, toolkit, function, arguments, bash_call_id, response_id, agent, requester, channel, thread,
    worker_key, checkpoint, status, created_at, decided_by, decided_at, note, claimed_at, result_status, outcome,
    settled_at
  FROM call_approvals;
DROP TABLE call_approvals;
ALTER TABLE call_approvals_next RENAME TO call_approvals;
CREATE INDEX call_approvals_status ON call_approvals (status, id);
CREATE INDEX call_approvals_conversation ON call_approvals (channel, thread, id);
{{end}}{{if postgres}}
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT conname FROM pg_constraint
      WHERE conrelid = 'call_approvals'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'
  LOOP
    EXECUTE format('ALTER TABLE call_approvals DROP CONSTRAINT %I', c.conname);
  END LOOP;
END $$;
ALTER TABLE call_approvals
  ADD CONSTRAINT call_approvals_status_check
    CHECK (status IN ('waiting', 'approved', 'claimed', 'done', 'interrupted', 'denied', 'expired')),
  ADD CONSTRAINT call_approvals_result_status_check
    CHECK (result_status IN ('', 'completed', 'failed', 'cancelled')),
  ADD CONSTRAINT call_approvals_decided_at_check CHECK ((status IN ('waiting', 'expired')) = (decided_at IS NULL)),
  ADD CONSTRAINT call_approvals_decided_by_check CHECK ((status IN ('waiting', 'expired')) = (decided_by = '')),
  ADD CONSTRAINT call_approvals_claimed_at_check CHECK ((status IN ('claimed', 'done', 'interrupted')) = (claimed_at IS NOT NULL)),
  ADD CONSTRAINT call_approvals_result_check CHECK ((status IN ('done', 'interrupted')) = (result_status <> '')),
  ADD CONSTRAINT call_approvals_settled_at_check
    CHECK ((status IN ('done', 'interrupted', 'denied', 'expired')) = (settled_at IS NOT NULL));
{{end}}
