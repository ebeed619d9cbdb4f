-- 0002: the leader lease of active/standby primaries (package primary/leader).
--
-- leader_lease is the one lease row: who holds it, where it serves gRPC, its fencing token and
-- when it expires by the database's clock. leader_fence holds the newest fencing token; it
-- changes only when a primary takes the lease over, and every fenced write transaction reads
-- it FOR SHARE first, so a takeover waits for the writes in flight and any later write of the
-- old leader finds a token that is not its own. Tokens come from a sequence: each takeover's is
-- greater than every earlier one.

CREATE SEQUENCE leader_fence_seq;

CREATE TABLE leader_fence (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  fence BIGINT  NOT NULL
);
INSERT INTO leader_fence (id, fence) VALUES (1, 0);

CREATE TABLE leader_lease (
  id         INTEGER     PRIMARY KEY CHECK (id = 1),
  holder     TEXT        NOT NULL,
  addr       TEXT        NOT NULL,
  fence      BIGINT      NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO leader_lease (id, holder, addr, fence, expires_at) VALUES (1, '', '', 0, '-infinity');
