-- 005-job-series.sql - a series job's series (its key and version) in
-- columns beside the JSON payload, so that the daemon asks the store in
-- one query which queued jobs a newer version of a series supersedes,
-- instead of reading and parsing every queued job's payload.  Jobs queued
-- before this migration get them from their payload.

ALTER TABLE jobs ADD COLUMN series_key TEXT;
ALTER TABLE jobs ADD COLUMN series_version INTEGER;
UPDATE jobs SET series_key = json_extract(payload, '$.key'),
                series_version = json_extract(payload, '$.version')
 WHERE kind = 'series' AND json_valid(payload);
