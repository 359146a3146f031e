-- 014-worker-arch.sql - workers say which architectures their lab has
-- (bot/lab/arch.h's names), and a job may need one: a series touching a
-- driver whose QEMU board is another architecture's (qemu/boards) is left
-- to a worker that has that lab, when one is about.

ALTER TABLE jobs ADD COLUMN arch TEXT;   -- the architecture the job needs, NULL: any worker

-- Each worker's row, written when it starts and before each claim.
CREATE TABLE workers (
	name     TEXT PRIMARY KEY,          -- "host:pid", as jobs.worker
	machine  TEXT NOT NULL,             -- boot id and pid namespace
	arches   TEXT NOT NULL,             -- its lab's architectures, "x86_64,arm64"
	seen     INTEGER NOT NULL           -- the database's clock when it last said so (Unix time)
);
