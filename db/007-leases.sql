-- 007-leases.sql - many workers on one queue: a running job is held by
-- one worker under a lease that the worker renews while it works.  A job
-- whose lease ended goes back to the queue (its worker died, stalled or
-- lost the store), and only then; a result that comes after the lease is
-- refused.  worker is the holder's name ("host:pid", shown by `printkbot
-- queue`); worker_machine and worker_pid say where it runs, so a worker
-- starting on the same machine queues again at once the jobs of one that
-- is gone, rather than waiting for their leases.  Jobs left running by a
-- printkbot before leases get an ended one: they are queued again at the
-- next claim.  Plain SQL both backends take.

ALTER TABLE jobs ADD COLUMN worker TEXT;
ALTER TABLE jobs ADD COLUMN worker_machine TEXT;
ALTER TABLE jobs ADD COLUMN worker_pid INTEGER;
ALTER TABLE jobs ADD COLUMN lease_until INTEGER;
UPDATE jobs SET lease_until = 0 WHERE state = 'running';
