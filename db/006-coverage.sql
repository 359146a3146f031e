-- 006-coverage.sql - what of a tested patch the kernel held
-- (lab/coverage.h): one row per touched file, and the verdict not-built,
-- which the CHECK of tests.verdict must take.  SQLite cannot change a
-- CHECK in place, so tests is made again under its name: the store runs
-- migrations with foreign keys off (dropping the old table cascades to
-- nothing; the rows that point at it point at the new one, same ids) and
-- checks them before it commits.

CREATE TABLE tests_new (
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
INSERT INTO tests_new (id, patch_id, before_build, after_build, before_boot, after_boot, verdict,
                       reason, seconds, records_before, records_after, noise_dropped, created)
	SELECT id, patch_id, before_build, after_build, before_boot, after_boot, verdict,
	       reason, seconds, records_before, records_after, noise_dropped, created FROM tests;
DROP TABLE tests;
ALTER TABLE tests_new RENAME TO tests;
CREATE INDEX tests_patch ON tests(patch_id);

-- struct pk_file_coverage (lab/coverage.h), in the patch's order.
CREATE TABLE test_coverage (
	test_id INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	file    TEXT NOT NULL,
	state   TEXT NOT NULL CHECK (state IN ('booted', 'built', 'not-built')),
	reason  TEXT,
	PRIMARY KEY (test_id, seq)
) WITHOUT ROWID;
CREATE INDEX test_coverage_file ON test_coverage(file);
