-- 0016: identity links, which person each chat account is. A runtime relays a decision made
-- by an account on a chat surface (matrix, slack); the link names the person it is (a
-- requester id or an operator name). One account is one person; a person may have several
-- accounts. The lengths are fieldrule's Surface, ChatUserID and Person.

CREATE TABLE identity_links (
  surface      TEXT    NOT NULL CHECK ({{octets "surface"}} BETWEEN 1 AND 32),
  chat_user_id TEXT    NOT NULL CHECK ({{octets "chat_user_id"}} BETWEEN 1 AND 255),
  person       TEXT    NOT NULL CHECK ({{octets "person"}} BETWEEN 1 AND 64),
  created_by   TEXT    NOT NULL CHECK (created_by <> ''),
  created_at   {{int64}} NOT NULL,
  PRIMARY KEY (surface, chat_user_id)
) {{strict}};

CREATE INDEX identity_links_person ON identity_links (person);
