-- 0007: request_approval and permission_prompt requests ("prompts") and permission
-- allow-lists.
--
-- A prompt moves pending → approved | denied | expired, once. The CHECKs tie each state to the
-- columns it needs: decided_at exactly when it left pending, decided_by and decision exactly
-- when a person decided, approved exactly for the approving decisions, and each kind's own
-- texts. A permission prompt holds only the masked copy of the tool input.

CREATE TABLE prompts (
  id            {{id}},
  kind          TEXT    NOT NULL CHECK (kind IN ('approval', 'permission')),
  channel       TEXT    NOT NULL CHECK (channel <> ''),
  thread        TEXT    NOT NULL,
  requester     TEXT    NOT NULL,
  agent         TEXT    NOT NULL,
  response_id   TEXT    NOT NULL,
  call_id       TEXT    NOT NULL,
  title         TEXT    NOT NULL CHECK (length(title) <= 200),
  details       TEXT    NOT NULL CHECK (length(details) <= 8000),
  approve_label TEXT    NOT NULL CHECK (length(approve_label) <= 60),
  deny_label    TEXT    NOT NULL CHECK (length(deny_label) <= 60),
  tool_name     TEXT    NOT NULL CHECK (length(tool_name) <= 200),
  tool_use_id   TEXT    NOT NULL CHECK (length(tool_use_id) <= 200),
  masked_input  TEXT             CHECK (masked_input IS NULL OR {{json_valid "masked_input"}}),
  status        TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  created_at    {{int64}} NOT NULL,
  deadline      {{int64}} NOT NULL,
  decided_by    TEXT    NOT NULL DEFAULT '',
  decided_at    {{int64}},
  decision      TEXT    NOT NULL DEFAULT '',
  feedback      TEXT    NOT NULL DEFAULT '' CHECK (length(feedback) <= 2000),
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
) {{strict}};

-- Listing by state (and expiring the pending ones at boot), and by conversation.
CREATE INDEX prompts_status ON prompts (status, id);
CREATE INDEX prompts_conversation ON prompts (channel, thread, id);

-- A tool allowed without asking in a conversation: for the life of one primary ('thread'),
-- or until removed ('conversation'). Granted by an operator's decision on a prompt.
CREATE TABLE permission_allowances (
  channel    TEXT    NOT NULL CHECK (channel <> ''),
  thread     TEXT    NOT NULL,
  tool_name  TEXT    NOT NULL CHECK (tool_name <> ''),
  scope      TEXT    NOT NULL CHECK (scope IN ('thread', 'conversation')),
  granted_by TEXT    NOT NULL CHECK (granted_by <> ''),
  granted_at {{int64}} NOT NULL,
  prompt_id  {{int64}} NOT NULL REFERENCES prompts (id),
  PRIMARY KEY (channel, thread, tool_name, scope)
) {{strict}};
{{if postgres}}
-- Listing allowances newest first; PostgreSQL's schema has had it from its first version.
CREATE INDEX permission_allowances_granted ON permission_allowances (granted_at);
{{end}}
