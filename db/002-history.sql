-- 002-history.sql - what `printkbot history` needs: each patch's verdict
-- where the static rows can read it, and indexes for the filters that the
-- bench (bench/store.sh) showed scanning.

-- The latest test's verdict, or the scan's for a patch never tested.
ALTER TABLE patches ADD COLUMN verdict TEXT;
UPDATE patches SET verdict = COALESCE(
	(SELECT t.verdict FROM tests t WHERE t.patch_id = patches.id ORDER BY t.id DESC LIMIT 1),
	scan_verdict);

CREATE INDEX patches_time ON patches(time);
CREATE INDEX findings_file ON findings(file);
CREATE INDEX console_changes_file ON console_changes(file);
CREATE INDEX console_changes_func ON console_changes(func);
CREATE INDEX index_changes_file ON index_changes(file);
CREATE INDEX index_changes_func ON index_changes(func);
