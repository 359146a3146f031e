-- 013-arch.sql - each build says which architecture it was made for
-- (bot/lab/arch.h's names: x86_64, arm64), so that history and a
-- review's stored test tell an arm64 kernel from an x86_64 one without
-- reading its .config.  Every build from before was x86_64's.

ALTER TABLE builds ADD COLUMN arch TEXT NOT NULL DEFAULT 'x86_64';   -- what it was built for (lab/arch.h)
