-- schema.sql - the current full schema of printkbot's database (schema
-- version 14, kept in PRAGMA user_version).  A new database is made from
-- this file; an older one is brought here by the numbered migrations
-- db/NNN-*.sql, and test-store checks that both ways give the same tables.
-- Change both together: a new NNN-*.sql and this file.
--
-- The same files make a PostgreSQL store ([store] url): written in
-- SQLite's words, translated by the one table of bot/store/sql-pg.c
-- (INTEGER PRIMARY KEY, INTEGER, REAL, BLOB, WITHOUT ROWID; the version
-- in table printkbot_schema).  A PostgreSQL database starts at version 7,
-- so only migrations after 007 ever run there, and they must be plain
-- SQL both take (a line "-- pg: SQL" is a comment to SQLite and SQL to
-- PostgreSQL, for what only PostgreSQL needs): there foreign keys are
-- never off, so a table is not dropped and made again under rows that
-- point at it.
--
-- Times are Unix seconds (UTC).  Blobs named raw, console or config are gzip.
-- Records and printk index entries are stored once and shared: a boot
-- points at rows that every boot printing the same line, or building the
-- same index, points at too.

CREATE TABLE sources (
	id          INTEGER PRIMARY KEY,
	kind        TEXT NOT NULL CHECK (kind IN ('mbox', 'maildir', 'imap', 'public-inbox', 'git')),
	name        TEXT NOT NULL,          -- a list, a mailbox, a repository and branch
	url         TEXT,
	UNIQUE (kind, name)
);

CREATE TABLE series (
	id               INTEGER PRIMARY KEY,
	source_id        INTEGER REFERENCES sources(id),
	cover_message_id TEXT UNIQUE,
	cover_subject    TEXT,
	version          INTEGER NOT NULL DEFAULT 1,
	total            INTEGER NOT NULL DEFAULT 1,
	created          INTEGER NOT NULL
);

CREATE TABLE patches (
	id            INTEGER PRIMARY KEY,
	source_id     INTEGER REFERENCES sources(id),
	series_id     INTEGER REFERENCES series(id),
	message_id    TEXT UNIQUE,          -- without <>; NULL for a commit
	commit_id     TEXT,                 -- the commit, for git sources
	subject       TEXT,
	author        TEXT,                 -- From: as written
	author_name   TEXT,
	author_email  TEXT,
	date          TEXT,                 -- Date: as written
	time          INTEGER,              -- Date: as Unix time, NULL when unknown
	tz_minutes    INTEGER,
	version       INTEGER NOT NULL DEFAULT 1,   -- [PATCH vN n/m]
	number        INTEGER NOT NULL DEFAULT 1,
	total         INTEGER NOT NULL DEFAULT 1,
	raw           BLOB,                 -- gzip of the commit message and the diff
	raw_size      INTEGER,
	raw_ref       TEXT,                 -- or where the raw patch can be read again
	scan_verdict  TEXT,
	calls_changed INTEGER,
	created       INTEGER NOT NULL,
	verdict       TEXT                  -- the latest test's, else the scan's
);
CREATE INDEX patches_series ON patches(series_id);
CREATE INDEX patches_commit ON patches(commit_id);

-- struct pk_finding (scan.h), in the scan's order.
CREATE TABLE findings (
	id        INTEGER PRIMARY KEY,
	patch_id  INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	file      TEXT,
	line      INTEGER,
	kind      TEXT NOT NULL,
	old_call  TEXT,
	new_call  TEXT,
	old_level TEXT,
	new_level TEXT,
	old_text  TEXT,
	new_text  TEXT,
	message   TEXT,
	UNIQUE (patch_id, seq)
);

CREATE TABLE builds (
	id          INTEGER PRIMARY KEY,
	tree_commit TEXT NOT NULL,          -- what was built
	base_commit TEXT,                   -- the base it was applied on (= tree_commit for the base)
	config_hash TEXT NOT NULL,
	status      TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
	seconds     REAL,
	errors      TEXT,                   -- the compiler's first error lines
	log_path    TEXT,
	noise_boots INTEGER NOT NULL DEFAULT 0,   -- boots the noise mask was learnt from
	created     INTEGER NOT NULL,
	config      BLOB,                   -- gzip of the build's .config, NULL when not read
	arch        TEXT                    -- what it was built for (lab/arch.h), NULL before 013
);
CREATE INDEX builds_key ON builds(tree_commit, config_hash);

-- Run-to-run noise of a build's kernel: pk_noise_keys() lines (kdiff.h).
CREATE TABLE noise_keys (
	build_id INTEGER NOT NULL REFERENCES builds(id) ON DELETE CASCADE,
	key      TEXT NOT NULL,
	PRIMARY KEY (build_id, key)
) WITHOUT ROWID;

-- struct pk_index_entry (kmsg.h), one row per distinct entry of any build.
CREATE TABLE index_entries (
	id     INTEGER PRIMARY KEY,
	digest BLOB NOT NULL UNIQUE,        -- of (level, cont, file, line, func, format)
	level  INTEGER NOT NULL,
	cont   INTEGER NOT NULL,
	file   TEXT NOT NULL,
	line   INTEGER NOT NULL,
	func   TEXT NOT NULL,
	format TEXT NOT NULL
);

-- A whole printk index, in the kernel's order; boots with the same index
-- share the set.  A set is a list of items: one entry, or the run
-- [parent_from, parent_to) of the parent set's list, so the index of a
-- patched kernel costs only what the patch changed.
CREATE TABLE index_sets (
	id        INTEGER PRIMARY KEY,
	digest    BLOB NOT NULL UNIQUE,     -- of the entry digests in order
	parent_id INTEGER REFERENCES index_sets(id),
	count     INTEGER NOT NULL
);
CREATE TABLE index_set_items (
	set_id      INTEGER NOT NULL REFERENCES index_sets(id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	entry_id    INTEGER REFERENCES index_entries(id),
	parent_from INTEGER,
	parent_to   INTEGER,
	PRIMARY KEY (set_id, seq),
	CHECK ((entry_id IS NULL) <> (parent_from IS NULL))
) WITHOUT ROWID;
CREATE INDEX index_set_items_entry ON index_set_items(entry_id);

CREATE TABLE boots (
	id               INTEGER PRIMARY KEY,
	build_id         INTEGER NOT NULL REFERENCES builds(id),
	status           TEXT NOT NULL CHECK (status IN ('ok', 'panic', 'timeout', 'failed')),
	seconds          REAL,
	accel            TEXT,
	cmdline          TEXT,
	console          BLOB,              -- gzip of ttyS0
	console_size     INTEGER,
	detail           TEXT,
	index_set_id     INTEGER REFERENCES index_sets(id),
	record_count     INTEGER NOT NULL DEFAULT 0,
	lost             INTEGER NOT NULL DEFAULT 0,
	complete         INTEGER NOT NULL DEFAULT 0,
	problems         TEXT,
	created          INTEGER NOT NULL
);
CREATE INDEX boots_build ON boots(build_id);
CREATE INDEX boots_index_set ON boots(index_set_id);

-- The distinct records of any boot (struct pk_record without seq and time).
CREATE TABLE record_lines (
	id       INTEGER PRIMARY KEY,
	digest   BLOB NOT NULL UNIQUE,      -- of (level, facility, cont, caller, text, dict)
	level    INTEGER NOT NULL,
	facility INTEGER NOT NULL,
	cont     INTEGER NOT NULL,
	caller   TEXT,
	text     TEXT NOT NULL,
	dict     BLOB                       -- "KEY=value" strings, each NUL-terminated
);
-- A boot's records in order: a shared line plus what is the boot's own.
CREATE TABLE boot_records (
	boot_id INTEGER NOT NULL REFERENCES boots(id) ON DELETE CASCADE,
	pos     INTEGER NOT NULL,
	line_id INTEGER NOT NULL REFERENCES record_lines(id),
	seq     INTEGER NOT NULL,
	ts_usec INTEGER NOT NULL,
	PRIMARY KEY (boot_id, pos)
) WITHOUT ROWID;

CREATE TABLE tests (
	id             INTEGER PRIMARY KEY,
	patch_id       INTEGER NOT NULL REFERENCES patches(id),
	before_build   INTEGER REFERENCES builds(id),
	after_build    INTEGER REFERENCES builds(id),
	before_boot    INTEGER REFERENCES boots(id),
	after_boot     INTEGER REFERENCES boots(id),
	verdict        TEXT NOT NULL CHECK (verdict IN ('no-churn', 'no-visible-change',
	                     'console-changed', 'does-not-apply', 'build-failed',
	                     'boot-failed', 'refused', 'not-built')),
	reason         TEXT,
	seconds        REAL,
	records_before INTEGER,
	records_after  INTEGER,
	noise_dropped  INTEGER,
	created        INTEGER NOT NULL
);
CREATE INDEX tests_patch ON tests(patch_id);

-- struct pk_file_coverage (lab/coverage.h), in the patch's order (006-coverage.sql).
CREATE TABLE test_coverage (
	test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	file    TEXT NOT NULL,
	state   TEXT NOT NULL CHECK (state IN ('booted', 'built', 'not-built')),
	reason  TEXT,
	PRIMARY KEY (test_id, seq)
) WITHOUT ROWID;
CREATE INDEX test_coverage_file ON test_coverage(file);

-- struct pk_change (kdiff.h), in after-boot order; file..format is the origin.
CREATE TABLE console_changes (
	id        INTEGER PRIMARY KEY,
	test_id   INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	kind      TEXT NOT NULL,
	old_level INTEGER,
	new_level INTEGER,
	old_text  TEXT,
	new_text  TEXT,
	file      TEXT,
	line      INTEGER,
	func      TEXT,
	format    TEXT,
	message   TEXT,
	UNIQUE (test_id, seq)
);

-- struct pk_index_change (kdiff.h).
CREATE TABLE index_changes (
	id         INTEGER PRIMARY KEY,
	test_id    INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	old_level  INTEGER,
	new_level  INTEGER,
	old_format TEXT,
	new_format TEXT,
	file       TEXT,
	line       INTEGER,
	func       TEXT,
	format     TEXT,
	UNIQUE (test_id, seq)
);

-- How each static finding showed up in the test's boots.
CREATE TABLE finding_checks (
	test_id      INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	finding_id   INTEGER NOT NULL REFERENCES findings(id) ON DELETE CASCADE,
	confirmation TEXT NOT NULL CHECK (confirmation IN ('seen-at-boot', 'in-index-only', 'not-confirmed')),
	PRIMARY KEY (test_id, finding_id)
) WITHOUT ROWID;

-- The review model (review.h) is the source; body is its first rendering.
CREATE TABLE reviews (
	id               INTEGER PRIMARY KEY,
	test_id          INTEGER REFERENCES tests(id),
	model            TEXT NOT NULL,
	body             TEXT NOT NULL,
	created          INTEGER NOT NULL,
	posted_to        TEXT,              -- a list address, a file, stdout
	posted_at        INTEGER,
	reply_message_id TEXT
);
CREATE INDEX reviews_test ON reviews(test_id);

-- The daemon's queue.  state is written by one function of store/jobs.c only.
CREATE TABLE jobs (
	id       INTEGER PRIMARY KEY,
	kind     TEXT NOT NULL,             -- "series", "reply", "push", "command" (enum pk_job_kind)
	payload  TEXT,                      -- what to do, as the kind defines it (JSON)
	state    TEXT NOT NULL DEFAULT 'queued'
	         CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	detail   TEXT,                      -- why it failed, what it produced
	attempts INTEGER NOT NULL DEFAULT 0,
	created  INTEGER NOT NULL,
	updated  INTEGER NOT NULL,
	not_before INTEGER NOT NULL DEFAULT 0,  -- a retried job waits until then (003-daemon.sql)
	series_key TEXT,                    -- a series job's series and version, NULL for
	series_version INTEGER,             -- the other kinds (005-job-series.sql)
	worker   TEXT,                      -- a running job's holder, "host:pid" (007-leases.sql)
	worker_machine TEXT,                -- its machine: boot id and pid namespace
	worker_pid INTEGER,                 -- its process there
	lease_until INTEGER,                -- the holder's lease ends then (Unix time)
	arch     TEXT                       -- the architecture it needs, NULL: any (014-worker-arch.sql)
);
CREATE INDEX jobs_state ON jobs(state, id);

-- The workers and the architectures their labs have (014-worker-arch.sql).
CREATE TABLE workers (
	name     TEXT PRIMARY KEY,          -- "host:pid", as jobs.worker
	machine  TEXT NOT NULL,             -- boot id and pid namespace
	arches   TEXT NOT NULL,             -- its lab's architectures, "x86_64,arm64"
	seen     INTEGER NOT NULL           -- the database's clock when it last said so (Unix time)
);

-- History filters (002-history.sql).
CREATE INDEX patches_time ON patches(time);
CREATE INDEX findings_file ON findings(file);
CREATE INDEX console_changes_file ON console_changes(file);
CREATE INDEX console_changes_func ON console_changes(func);
CREATE INDEX index_changes_file ON index_changes(file);
CREATE INDEX index_changes_func ON index_changes(func);

-- The daemon (003-daemon.sql).
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

-- Watched branches (009-pushes.sql): each push the daemon saw on one,
-- and its new commits along first parents, oldest first.
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

-- The reply to one tested mail, or the mail to the author of one pushed
-- commit (009-pushes.sql): rendered once, sent (maybe again) as is.
CREATE TABLE replies (
	id           INTEGER PRIMARY KEY,
	mail_id      INTEGER UNIQUE REFERENCES mails(id),   -- the patch mail answered, or NULL
	review_id    INTEGER REFERENCES reviews(id),
	job_id       INTEGER REFERENCES jobs(id),   -- the job that tested the mail or commit
	after_commit TEXT,                  -- where the next patch of the series goes
	message_id   TEXT UNIQUE,           -- the reply's own, without <>
	sender       TEXT,                  -- envelope sender
	recipients   TEXT,                  -- envelope recipients, one a line
	text         TEXT,                  -- the whole mail; NULL when none is sent
	sent         INTEGER,               -- when it was sent, NULL while not
	push_commit_id INTEGER UNIQUE REFERENCES push_commits(id),   -- the pushed commit, or NULL
	-- what the list's policy made of it (011-reply-policy.sql)
	list_name    TEXT,                  -- the [list] or [tree] group's name, NULL for none
	author       TEXT,                  -- the patch's or commit's author's address, lower case
	effect       TEXT,                  -- pk_reply_effect_key() of its review
	rule         TEXT,                  -- the rule of pk_reply_judge() that held
	held         TEXT,                  -- why no mail went (or goes) out; NULL: it is mailed
	created      INTEGER NOT NULL DEFAULT 0,   -- when it was decided
	send_job     INTEGER REFERENCES jobs(id),  -- the job that sends it
	CHECK ((mail_id IS NULL) <> (push_commit_id IS NULL))
);
CREATE INDEX replies_list ON replies(list_name, created);
CREATE INDEX replies_author ON replies(author, created);
CREATE INDEX replies_effect ON replies(effect);

-- Commands by mail the daemon acted on (010-commands.sql): the rate
-- limits count them.  The command's mail is a row of mails, queued in
-- its job (kind command).
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

-- The store's secrets (008-secrets.sql): made once at random, kept.
CREATE TABLE secrets (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
