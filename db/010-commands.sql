-- 010-commands.sql - commands by mail ([daemon] commands_from): each
-- #printkbot command the daemon acted on is a row, its mail one of
-- mails (queued in its job, kind command), so that the rate limits
-- ([daemon] commands_per_hour per sender, commands_per_thread_hour per
-- thread) count what was acted on in the last hour, across restarts.
-- A command refused (a stranger's, one over a limit) is no row: its mail
-- is skipped with the reason.

CREATE TABLE commands (
	id        INTEGER PRIMARY KEY,
	mail_id   INTEGER NOT NULL UNIQUE REFERENCES mails(id),   -- the command's mail
	sender    TEXT NOT NULL,          -- its From's address, lower case
	thread    TEXT NOT NULL,          -- what the per-thread limit counts: "series N" (N its series' job) or "no series"
	command   TEXT NOT NULL,          -- "test", "help", "unknown"
	arg       TEXT,                   -- test: the base asked for
	job_id    INTEGER REFERENCES jobs(id),
	created   INTEGER NOT NULL
);
CREATE INDEX commands_sender ON commands(sender, created);
CREATE INDEX commands_thread ON commands(thread, created);
