-- 003-daemon.sql - what `printkbot daemon` keeps: how far each source was
-- read (IMAP UIDVALIDITY and last UID, the last public-inbox commit...),
-- every mail it saw, by Message-ID, so that none is handled twice, the
-- replies it rendered (the whole mail, with its Message-ID fixed), and the
-- time before which a job that is retried later may not run.

CREATE TABLE source_state (
	source_id INTEGER NOT NULL REFERENCES sources(id),
	key       TEXT NOT NULL,
	value     TEXT,
	PRIMARY KEY (source_id, key)
) WITHOUT ROWID;

-- Every mail the daemon read.  A patch or cover letter waits as 'pending'
-- until its series is complete (or waited for long enough), then is
-- 'queued' in a job; anything else is 'skipped' with the reason.
CREATE TABLE mails (
	id           INTEGER PRIMARY KEY,
	source_id    INTEGER REFERENCES sources(id),
	message_id   TEXT NOT NULL UNIQUE,  -- without <>
	in_reply_to  TEXT,
	refs         TEXT,                  -- References, space-separated, without <>
	subject      TEXT,
	author_email TEXT,
	version      INTEGER NOT NULL DEFAULT 1,
	number       INTEGER NOT NULL DEFAULT 1,
	total        INTEGER NOT NULL DEFAULT 1,
	churn        INTEGER NOT NULL DEFAULT 0,   -- printk-family calls the patch changes (scan)
	state        TEXT NOT NULL CHECK (state IN ('pending', 'queued', 'skipped')),
	reason       TEXT,
	raw          BLOB,                  -- gzip of the mail as received; NULL when skipped
	job_id       INTEGER REFERENCES jobs(id),
	received     INTEGER NOT NULL
);
CREATE INDEX mails_state ON mails(state);

-- The reply to one tested mail: rendered once, sent (maybe again) as is.
CREATE TABLE replies (
	id           INTEGER PRIMARY KEY,
	mail_id      INTEGER NOT NULL UNIQUE REFERENCES mails(id),
	review_id    INTEGER REFERENCES reviews(id),
	job_id       INTEGER REFERENCES jobs(id),   -- the job that tested the mail
	after_commit TEXT,                  -- where the next patch of the series goes
	message_id   TEXT UNIQUE,           -- the reply's own, without <>
	sender       TEXT,                  -- envelope sender
	recipients   TEXT,                  -- envelope recipients, one a line
	text         TEXT,                  -- the whole mail; NULL when none is sent
	sent         INTEGER                -- when it was sent, NULL while not
);

ALTER TABLE jobs ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
