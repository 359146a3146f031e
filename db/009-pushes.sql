-- 009-pushes.sql - watched branches ([tree NAME] watch =): each push the
-- daemon sees on one is a row of pushes, its new commits along first
-- parents rows of push_commits (oldest first), tested by one job.  A
-- pushed commit's mail to its author is a row of replies like a patch
-- mail's reply, so that the reply job, the outbox and the sent mark send
-- it once: replies.mail_id may now be NULL, push_commit_id naming the
-- commit instead (one of the two).  SQLite cannot drop a NOT NULL, so
-- replies is made again with its rows and ids (nothing points at it);
-- the line for PostgreSQL alone moves the id's identity past them.

CREATE TABLE pushes (
	id        INTEGER PRIMARY KEY,
	source_id INTEGER NOT NULL REFERENCES sources(id),  -- the branch: kind git, name TREE/BRANCH
	tree      TEXT NOT NULL,
	branch    TEXT NOT NULL,
	old_tip   TEXT NOT NULL,          -- the tip the daemon saw before
	new_tip   TEXT,                   -- the tip it saw now; NULL: the branch was deleted
	forced    INTEGER NOT NULL DEFAULT 0,   -- old_tip is not in new_tip's history
	commits   INTEGER NOT NULL DEFAULT 0,   -- listed in push_commits
	left_out  INTEGER NOT NULL DEFAULT 0,   -- older ones over max_commits, not listed
	note      TEXT,                   -- what was left out, in a sentence
	job_id    INTEGER REFERENCES jobs(id),
	created   INTEGER NOT NULL
);
CREATE INDEX pushes_source ON pushes(source_id);

CREATE TABLE push_commits (
	id        INTEGER PRIMARY KEY,
	push_id   INTEGER NOT NULL REFERENCES pushes(id),
	seq       INTEGER NOT NULL,       -- 1 is the oldest
	commit_id TEXT NOT NULL,
	parent    TEXT,                   -- its first parent
	subject   TEXT,
	author    TEXT,                   -- "Name <addr>"
	committer TEXT,
	state     TEXT NOT NULL DEFAULT 'queued'
	          CHECK (state IN ('queued', 'tested', 'tested-before', 'merge', 'skipped')),
	reason    TEXT,                   -- why it was not tested
	patch_key TEXT,                   -- its patch-id and its parent's tree, once read
	same_as   INTEGER REFERENCES push_commits(id),   -- tested-before: the one that was
	verdict   TEXT,
	review_id INTEGER REFERENCES reviews(id),
	UNIQUE (push_id, seq)
);
CREATE INDEX push_commits_commit ON push_commits(commit_id);
CREATE INDEX push_commits_key ON push_commits(patch_key);

CREATE TABLE replies_new (
	id           INTEGER PRIMARY KEY,
	mail_id      INTEGER UNIQUE REFERENCES mails(id),
	review_id    INTEGER REFERENCES reviews(id),
	job_id       INTEGER REFERENCES jobs(id),
	after_commit TEXT,
	message_id   TEXT UNIQUE,
	sender       TEXT,
	recipients   TEXT,
	text         TEXT,
	sent         INTEGER,
	push_commit_id INTEGER UNIQUE REFERENCES push_commits(id),
	CHECK ((mail_id IS NULL) <> (push_commit_id IS NULL))
);
INSERT INTO replies_new (id, mail_id, review_id, job_id, after_commit, message_id, sender,
                         recipients, text, sent)
     SELECT id, mail_id, review_id, job_id, after_commit, message_id, sender, recipients, text, sent
       FROM replies;
DROP TABLE replies;
ALTER TABLE replies_new RENAME TO replies;
-- pg: SELECT setval(pg_get_serial_sequence('replies', 'id'), COALESCE(max(id), 0) + 1, false) FROM replies;
