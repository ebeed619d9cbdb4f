-- 0009: Agent CLI calls that wait for a person's confirmation, and the runtime's checkpoint a
-- continuation hands back.
--
-- A call approval moves waiting → approved → claimed → done | interrupted, or waiting →
-- denied. The CHECKs tie each state to the columns it needs: decided_* are set exactly when it
-- left waiting, claimed_at exactly once it was claimed, a result exactly when it reached done
-- or interrupted, and settled_at exactly in an end state.

CREATE TABLE call_approvals (
  id            {{id}},
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
  checkpoint    {{bytes}} NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('waiting', 'approved', 'claimed', 'done', 'interrupted', 'denied')),
  created_at    {{int64}} NOT NULL,
  decided_by    TEXT    NOT NULL DEFAULT '',
  decided_at    {{int64}},
  note          TEXT    NOT NULL DEFAULT '',
  claimed_at    {{int64}},
  result_status TEXT    NOT NULL DEFAULT '' CHECK (result_status IN ('', 'completed', 'failed', 'cancelled')),
  outcome       TEXT    NOT NULL DEFAULT '',
  settled_at    {{int64}},
  CHECK ((status = 'waiting') = (decided_at IS NULL)),
  CHECK ((status = 'waiting') = (decided_by = '')),
  CHECK ((status IN ('claimed', 'done', 'interrupted')) = (claimed_at IS NOT NULL)),
  CHECK ((status IN ('done', 'interrupted')) = (result_status <> '')),
  CHECK ((status IN ('done', 'interrupted', 'denied')) = (settled_at IS NOT NULL)),
  UNIQUE (response_id, call_id)
) {{strict}};

-- Listing by state (and finding the claimed ones at boot), and by conversation.
CREATE INDEX call_approvals_status ON call_approvals (status, id);
CREATE INDEX call_approvals_conversation ON call_approvals (channel, thread, id);

-- The runtime's opaque checkpoint a continuation hands back; NULL for none.
ALTER TABLE continuations ADD COLUMN checkpoint {{bytes}};
