-- 004-boot-records.sql - drop the index of boot records by line: at 400
-- records a boot it was a fifth of the database (bench/store.sh), and no
-- query reads it; record lines are never deleted, so the foreign key does
-- not need it either.
DROP INDEX boot_records_line;
