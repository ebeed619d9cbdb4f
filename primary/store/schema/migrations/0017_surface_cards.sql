-- 0017: what each chat surface has delivered of the thread feed (package store,
-- SurfaceCards): the message showing each item, and the surface's positions. The lengths are
-- store's MaxSurface… limits.

CREATE TABLE surface_cards (
  surface    TEXT    NOT NULL CHECK ({{octets "surface"}} BETWEEN 1 AND 32),
  item_key   TEXT    NOT NULL CHECK ({{octets "item_key"}} BETWEEN 1 AND 64),
  room       TEXT    NOT NULL CHECK ({{octets "room"}} BETWEEN 1 AND 255),
  thread     TEXT    NOT NULL CHECK ({{octets "thread"}} <= 255),
  message_id TEXT    NOT NULL CHECK ({{octets "message_id"}} BETWEEN 1 AND 255),
  shown      {{int64}} NOT NULL CHECK (shown >= 0),
  updated_at {{int64}} NOT NULL,
  PRIMARY KEY (surface, item_key)
) {{strict}};

-- A person's reaction names the message, not the item.
CREATE UNIQUE INDEX surface_cards_message ON surface_cards (surface, message_id);

CREATE TABLE surface_positions (
  surface    TEXT    NOT NULL CHECK ({{octets "surface"}} BETWEEN 1 AND 32),
  name       TEXT    NOT NULL CHECK ({{octets "name"}} BETWEEN 1 AND 32),
  value      TEXT    NOT NULL CHECK ({{octets "value"}} <= 4096),
  updated_at {{int64}} NOT NULL,
  PRIMARY KEY (surface, name)
) {{strict}};
