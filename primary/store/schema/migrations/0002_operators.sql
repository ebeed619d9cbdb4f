-- 0002: operators, the people who use the operator API. Only the SHA-256 digest of each
-- operator's credential is kept, never the credential.

CREATE TABLE operators (
  name       TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
  role       TEXT    NOT NULL CHECK (role IN ('member', 'admin')),
  digest     {{bytes}} NOT NULL UNIQUE CHECK (length(digest) = 32),
  created_at {{int64}} NOT NULL
) {{strict}};
