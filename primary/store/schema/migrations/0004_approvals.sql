-- 0004: durable exact-command approvals and their comments, and where a job runs.
--
-- An approval moves pending → executing → consumed | failed, or pending → denied. The CHECKs
-- tie each state to the columns it needs, so a row can only hold a state the store can reach:
-- decided_* are set exactly when it left pending, settled_at exactly when it reached an end
-- state, a job only once it was approved, and consumed only with a job.

CREATE TABLE approvals (
  id         {{id}},
  key        TEXT    NOT NULL CHECK (length(key) = 64), -- hex SHA-256 of the authority fields
  kind       TEXT    NOT NULL CHECK (kind IN ('command')),
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  author     TEXT    NOT NULL,
  command    TEXT    NOT NULL CHECK (command <> ''),
  workdir    TEXT    NOT NULL CHECK (workdir <> ''),
  ceiling_ns {{int64}} NOT NULL CHECK (ceiling_ns >= 0),
  label      TEXT    NOT NULL,
  agent      TEXT    NOT NULL,
  worker_key TEXT    NOT NULL,
  status     TEXT    NOT NULL CHECK (status IN ('pending', 'executing', 'consumed', 'failed', 'denied')),
  created_at {{int64}} NOT NULL,
  decided_by TEXT    NOT NULL DEFAULT '',
  decided_at {{int64}},
  job_id     {{int64}} UNIQUE REFERENCES jobs (id),
  note       TEXT    NOT NULL DEFAULT '',
  settled_at {{int64}},
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'pending') = (decided_by = '')),
  CHECK ((status IN ('consumed', 'failed', 'denied')) = (settled_at IS NOT NULL)),
  CHECK (job_id IS NULL OR status IN ('executing', 'consumed', 'failed')),
  CHECK (status <> 'consumed' OR job_id IS NOT NULL)
) {{strict}};

-- One pending approval per authority key: two saves of the same request, even racing from two
-- processes, can never make two cards.
CREATE UNIQUE INDEX approvals_pending_key ON approvals (key) WHERE status = 'pending';

-- Listing by state (and recovery of the executing ones at boot), and by conversation.
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX approvals_conversation ON approvals (channel, thread, id);

CREATE TABLE approval_comments (
  id          {{id}},
  approval_id {{int64}} NOT NULL REFERENCES approvals (id),
  actor       TEXT    NOT NULL CHECK (actor <> ''),
  text        TEXT    NOT NULL CHECK ({{octets "text"}} BETWEEN 1 AND 2000),
  at          {{int64}} NOT NULL
) {{strict}};

CREATE INDEX approval_comments_approval ON approval_comments (approval_id, id);

-- Where a job runs: the workers' key (empty: the primary's own host) and, once known, the id
-- of the worker running it. Jobs created before this migration ran on the primary.
ALTER TABLE jobs ADD COLUMN worker_key TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN worker_id TEXT NOT NULL DEFAULT '';
