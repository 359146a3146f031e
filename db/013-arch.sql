-- 013-arch.sql - each build says which architecture it was made for
-- (bot/lab/arch.h's names: x86_64, arm64), so that history and a
-- review's stored test tell an arm64 kernel from an x86_64 one without
-- reading its .config.  A build from before has none (NULL): the arm64
-- lab came a version earlier, and no SQL can read a gzipped .config to
-- tell.

ALTER TABLE builds ADD COLUMN arch TEXT;   -- what it was built for (lab/arch.h), NULL before 013
