-- 008-secrets.sql - the store's own secrets, each made once at random and
-- kept (pk_store_secret()): the Message-ID of a reply is keyed with one,
-- so that nobody who reads a patch can compute its reply's id and send a
-- mail under it first, while a reply built again gets the same id.
-- Plain SQL both backends take.

CREATE TABLE secrets (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
