-- 0001: every table of the store, as the SQLite schema stands at its version 10.
--
-- Times are Unix nanoseconds (UTC) in BIGINT: a timestamp column keeps only microseconds, and
-- the store keeps times to the nanosecond. JSON is kept as TEXT, checked to be JSON of its
-- kind, so it reads back byte for byte as it was written. Ids come from identity columns and
-- are never reused. The CHECKs and partial unique indexes are the SQLite schema's: each ties a
-- state to the columns it needs, so a row can hold only a state the store can reach, whoever
-- writes it.

CREATE TABLE continuations (
  id              BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  idempotency_key TEXT    NOT NULL UNIQUE CHECK (octet_length(idempotency_key) BETWEEN 1 AND 256),
  channel         TEXT    NOT NULL CHECK (channel <> ''),
  thread          TEXT    NOT NULL,
  text            TEXT    NOT NULL,
  post            BOOLEAN NOT NULL DEFAULT false,
  checkpoint      BYTEA,
  created_at      BIGINT  NOT NULL,
  delivered_count INTEGER NOT NULL DEFAULT 0,
  acked_at        BIGINT
);

-- What Subscribe reads: the pending ones, in id order.
CREATE INDEX continuations_pending ON continuations (id) WHERE acked_at IS NULL;

CREATE TABLE conversation_modes (
  channel    TEXT   NOT NULL CHECK (channel <> ''),
  thread     TEXT   NOT NULL,
  mode       TEXT   NOT NULL CHECK (mode IN ('ask', 'auto', 'admin')),
  updated_at BIGINT NOT NULL,
  updated_by TEXT   NOT NULL CHECK (updated_by <> ''),
  PRIMARY KEY (channel, thread)
);

CREATE TABLE audit_log (
  id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at      BIGINT NOT NULL,
  actor   TEXT   NOT NULL CHECK (actor <> ''),
  action  TEXT   NOT NULL CHECK (action <> ''),
  subject TEXT   NOT NULL,
  detail  TEXT   NOT NULL CHECK (json_typeof(detail::json) = 'object')
);

CREATE INDEX audit_log_subject ON audit_log (subject, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);

-- Operators: only the SHA-256 digest of each credential is kept.
CREATE TABLE operators (
  name       TEXT   PRIMARY KEY CHECK (char_length(name) BETWEEN 1 AND 64),
  role       TEXT   NOT NULL CHECK (role IN ('member', 'admin')),
  digest     BYTEA  NOT NULL UNIQUE CHECK (octet_length(digest) = 32),
  created_at BIGINT NOT NULL
);

-- Background jobs: inserted running (pid 0 until its process is recorded), finished once;
-- exit_code is NULL when unknown. worker_key is empty for the primary's own host.
CREATE TABLE jobs (
  id               BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY, -- names the log file
  kind             TEXT    NOT NULL CHECK (kind IN ('command', 'agent')),
  command          TEXT    NOT NULL CHECK (command <> ''),
  label            TEXT    NOT NULL,
  channel          TEXT    NOT NULL CHECK (channel <> ''),
  thread           TEXT    NOT NULL,
  author           TEXT    NOT NULL,
  agent            TEXT    NOT NULL,
  workspace        TEXT    NOT NULL,
  worker_key       TEXT    NOT NULL DEFAULT '',
  worker_id        TEXT    NOT NULL DEFAULT '',
  ceiling_ns       BIGINT  NOT NULL,
  log_path         TEXT    NOT NULL CHECK (log_path <> ''),
  status           TEXT    NOT NULL CHECK (status IN ('running', 'finished')),
  pid              BIGINT  NOT NULL DEFAULT 0,
  proc_start       BIGINT  NOT NULL DEFAULT 0,
  created_at       BIGINT  NOT NULL,
  ended_at         BIGINT,
  outcome          TEXT    NOT NULL DEFAULT '',
  exit_code        BIGINT,
  tail             TEXT    NOT NULL DEFAULT '',
  cancel_requested BOOLEAN NOT NULL DEFAULT false
);

-- What the caps count: the running jobs, per conversation.
CREATE INDEX jobs_running ON jobs (channel, thread) WHERE status = 'running';
CREATE INDEX jobs_status ON jobs (status, id);

-- Durable exact-command approvals: pending → executing → consumed | failed, or pending → denied.
CREATE TABLE approvals (
  id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key        TEXT   NOT NULL CHECK (length(key) = 64), -- hex SHA-256 of the authority fields
  kind       TEXT   NOT NULL CHECK (kind IN ('command')),
  channel    TEXT   NOT NULL CHECK (channel <> ''),
  thread     TEXT   NOT NULL,
  author     TEXT   NOT NULL,
  command    TEXT   NOT NULL CHECK (command <> ''),
  workdir    TEXT   NOT NULL CHECK (workdir <> ''),
  ceiling_ns BIGINT NOT NULL CHECK (ceiling_ns >= 0),
  label      TEXT   NOT NULL,
  agent      TEXT   NOT NULL,
  worker_key TEXT   NOT NULL,
  status     TEXT   NOT NULL CHECK (status IN ('pending', 'executing', 'consumed', 'failed', 'denied')),
  created_at BIGINT NOT NULL,
  decided_by TEXT   NOT NULL DEFAULT '',
  decided_at BIGINT,
  job_id     BIGINT UNIQUE REFERENCES jobs (id),
  note       TEXT   NOT NULL DEFAULT '',
  settled_at BIGINT,
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'pending') = (decided_by = '')),
  CHECK ((status IN ('consumed', 'failed', 'denied')) = (settled_at IS NOT NULL)),
  CHECK (job_id IS NULL OR status IN ('executing', 'consumed', 'failed')),
  CHECK (status <> 'consumed' OR job_id IS NOT NULL)
);

-- One pending approval per authority key, even when two primaries save it at once.
CREATE UNIQUE INDEX approvals_pending_key ON approvals (key) WHERE status = 'pending';
CREATE INDEX approvals_status ON approvals (status, id);
CREATE INDEX approvals_conversation ON approvals (channel, thread, id);

CREATE TABLE approval_comments (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  approval_id BIGINT NOT NULL REFERENCES approvals (id),
  actor       TEXT   NOT NULL CHECK (actor <> ''),
  text        TEXT   NOT NULL CHECK (octet_length(text) BETWEEN 1 AND 2000),
  at          BIGINT NOT NULL
);

CREATE INDEX approval_comments_approval ON approval_comments (approval_id, id);

-- ask_questions requests: pending → submitted | cancelled.
CREATE TABLE question_requests (
  id           BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key          TEXT    NOT NULL CHECK (length(key) = 64), -- hex SHA-256 of what is asked
  channel      TEXT    NOT NULL CHECK (channel <> ''),
  thread       TEXT    NOT NULL CHECK (thread <> ''),
  requester    TEXT    NOT NULL CHECK (requester <> ''),
  agent        TEXT    NOT NULL,
  response_id  TEXT    NOT NULL,
  title        TEXT    NOT NULL CHECK (title <> ''),
  presentation TEXT    NOT NULL CHECK (presentation IN ('auto', 'message', 'modal')),
  questions    TEXT    NOT NULL CHECK (json_typeof(questions::json) = 'array'),
  status       TEXT    NOT NULL CHECK (status IN ('pending', 'submitted', 'cancelled')),
  revision     INTEGER NOT NULL CHECK (revision >= 1),
  draft        TEXT    NOT NULL CHECK (json_typeof(draft::json) = 'object'),
  answers      TEXT             CHECK (answers IS NULL OR json_typeof(answers::json) = 'object'),
  created_at   BIGINT  NOT NULL,
  updated_at   BIGINT  NOT NULL,
  submitted_at BIGINT,
  cancelled_by TEXT    NOT NULL DEFAULT '',
  cancelled_at BIGINT,
  CHECK ((status = 'submitted') = (answers IS NOT NULL)),
  CHECK ((status = 'submitted') = (submitted_at IS NOT NULL)),
  CHECK ((status = 'cancelled') = (cancelled_by <> '')),
  CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL))
);

-- One pending request per person and thread, even when two primaries save at once.
CREATE UNIQUE INDEX question_requests_pending ON question_requests (channel, thread, requester)
  WHERE status = 'pending';
CREATE INDEX question_requests_status ON question_requests (status, id);
CREATE INDEX question_requests_conversation ON question_requests (channel, thread, id);
CREATE INDEX question_requests_requester ON question_requests (requester, id);

-- The latest report_progress snapshot of each response; a new report replaces it.
CREATE TABLE progress_snapshots (
  response_id TEXT   PRIMARY KEY CHECK (response_id <> ''),
  channel     TEXT   NOT NULL CHECK (channel <> ''),
  thread      TEXT   NOT NULL,
  agent       TEXT   NOT NULL,
  requester   TEXT   NOT NULL,
  title       TEXT   NOT NULL CHECK (title <> ''),
  steps       TEXT   NOT NULL CHECK (json_typeof(steps::json) = 'array' AND json_array_length(steps::json) >= 1),
  updated_at  BIGINT NOT NULL
);

CREATE INDEX progress_snapshots_updated ON progress_snapshots (updated_at, response_id);
CREATE INDEX progress_snapshots_conversation ON progress_snapshots (channel, thread, updated_at);

-- request_approval and permission_prompt requests: pending → approved | denied | expired.
CREATE TABLE prompts (
  id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind          TEXT   NOT NULL CHECK (kind IN ('approval', 'permission')),
  channel       TEXT   NOT NULL CHECK (channel <> ''),
  thread        TEXT   NOT NULL,
  requester     TEXT   NOT NULL,
  agent         TEXT   NOT NULL,
  response_id   TEXT   NOT NULL,
  call_id       TEXT   NOT NULL,
  title         TEXT   NOT NULL CHECK (char_length(title) <= 200),
  details       TEXT   NOT NULL CHECK (char_length(details) <= 8000),
  approve_label TEXT   NOT NULL CHECK (char_length(approve_label) <= 60),
  deny_label    TEXT   NOT NULL CHECK (char_length(deny_label) <= 60),
  tool_name     TEXT   NOT NULL CHECK (char_length(tool_name) <= 200),
  tool_use_id   TEXT   NOT NULL CHECK (char_length(tool_use_id) <= 200),
  masked_input  TEXT            CHECK (masked_input IS NULL OR json_typeof(masked_input::json) IS NOT NULL),
  status        TEXT   NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  created_at    BIGINT NOT NULL,
  deadline      BIGINT NOT NULL,
  decided_by    TEXT   NOT NULL DEFAULT '',
  decided_at    BIGINT,
  decision      TEXT   NOT NULL DEFAULT '',
  feedback      TEXT   NOT NULL DEFAULT '' CHECK (char_length(feedback) <= 2000),
  CHECK (kind <> 'approval' OR (details <> '' AND title <> '' AND approve_label <> '' AND deny_label <> ''
                                AND tool_name = '' AND tool_use_id = '' AND masked_input IS NULL)),
  CHECK (kind <> 'permission' OR (tool_name <> '' AND masked_input IS NOT NULL
                                  AND details = '' AND title = '' AND approve_label = '' AND deny_label = '')),
  CHECK (decision = '' OR (kind = 'approval' AND decision IN ('approve', 'deny', 'comment'))
                       OR (kind = 'permission' AND decision IN ('allow_once', 'allow_thread', 'allow_conversation', 'deny'))),
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status IN ('approved', 'denied')) = (decided_by <> '')),
  CHECK ((status IN ('approved', 'denied')) = (decision <> '')),
  CHECK ((status = 'approved') = (decision IN ('approve', 'allow_once', 'allow_thread', 'allow_conversation'))),
  CHECK (status <> 'expired' OR feedback <> '')
);

CREATE INDEX prompts_status ON prompts (status, id);
CREATE INDEX prompts_conversation ON prompts (channel, thread, id);

-- A tool allowed without asking in a conversation, for the life of one primary ('thread') or
-- until removed ('conversation').
CREATE TABLE permission_allowances (
  channel    TEXT   NOT NULL CHECK (channel <> ''),
  thread     TEXT   NOT NULL,
  tool_name  TEXT   NOT NULL CHECK (tool_name <> ''),
  scope      TEXT   NOT NULL CHECK (scope IN ('thread', 'conversation')),
  granted_by TEXT   NOT NULL CHECK (granted_by <> ''),
  granted_at BIGINT NOT NULL,
  prompt_id  BIGINT NOT NULL REFERENCES prompts (id),
  PRIMARY KEY (channel, thread, tool_name, scope)
);

CREATE INDEX permission_allowances_granted ON permission_allowances (granted_at);

-- The shell mode of each agent in each conversation; no row is the default (standard).
CREATE TABLE shell_modes (
  channel    TEXT   NOT NULL CHECK (channel <> ''),
  thread     TEXT   NOT NULL,
  agent      TEXT   NOT NULL CHECK (agent <> ''),
  mode       TEXT   NOT NULL CHECK (mode IN ('standard', 'minimal')),
  updated_at BIGINT NOT NULL,
  updated_by TEXT   NOT NULL CHECK (updated_by <> ''),
  PRIMARY KEY (channel, thread, agent)
);

-- Agent CLI calls that wait for a person's confirmation: waiting → approved → claimed →
-- done | interrupted, or waiting → denied.
CREATE TABLE call_approvals (
  id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  call_id       TEXT   NOT NULL CHECK (length(call_id) = 36),
  toolkit       TEXT   NOT NULL CHECK (toolkit <> ''),
  function      TEXT   NOT NULL CHECK (function <> ''),
  arguments     TEXT   NOT NULL CHECK (json_typeof(arguments::json) = 'object'),
  bash_call_id  TEXT   NOT NULL,
  response_id   TEXT   NOT NULL CHECK (response_id <> ''),
  agent         TEXT   NOT NULL CHECK (agent <> ''),
  requester     TEXT   NOT NULL,
  channel       TEXT   NOT NULL,
  thread        TEXT   NOT NULL,
  worker_key    TEXT   NOT NULL,
  checkpoint    BYTEA  NOT NULL,
  status        TEXT   NOT NULL CHECK (status IN ('waiting', 'approved', 'claimed', 'done', 'interrupted', 'denied')),
  created_at    BIGINT NOT NULL,
  decided_by    TEXT   NOT NULL DEFAULT '',
  decided_at    BIGINT,
  note          TEXT   NOT NULL DEFAULT '',
  claimed_at    BIGINT,
  result_status TEXT   NOT NULL DEFAULT '' CHECK (result_status IN ('', 'completed', 'failed', 'cancelled')),
  outcome       TEXT   NOT NULL DEFAULT '',
  settled_at    BIGINT,
  CHECK ((status = 'waiting') = (decided_at IS NULL)),
  CHECK ((status = 'waiting') = (decided_by = '')),
  CHECK ((status IN ('claimed', 'done', 'interrupted')) = (claimed_at IS NOT NULL)),
  CHECK ((status IN ('done', 'interrupted')) = (result_status <> '')),
  CHECK ((status IN ('done', 'interrupted', 'denied')) = (settled_at IS NOT NULL)),
  UNIQUE (response_id, call_id)
);

CREATE INDEX call_approvals_status ON call_approvals (status, id);
CREATE INDEX call_approvals_conversation ON call_approvals (channel, thread, id);
