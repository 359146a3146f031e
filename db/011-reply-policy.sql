-- 011-reply-policy.sql - what the lists want mailed ([list NAME],
-- report/listpolicy.h): each reply row says which list's policy it was
-- decided under, the rule that held, what the patch does (its effect
-- key: a resend or a new version with the same one is not mailed
-- again), and, when no mail goes out, why (held).  The brakes of a list
-- (max_per_day, max_per_author_day) count its rows with a mail and
-- nothing held in the last 24 hours; an embargoed mail waits in its
-- send job (send_job, not before its time) until a later version
-- replaces it.

ALTER TABLE replies ADD COLUMN list_name TEXT;    -- the [list] or [tree] group's name, NULL for none
ALTER TABLE replies ADD COLUMN author TEXT;       -- the patch's or commit's author's address, lower case
ALTER TABLE replies ADD COLUMN effect TEXT;       -- pk_reply_effect_key() of its review
ALTER TABLE replies ADD COLUMN rule TEXT;         -- the rule of pk_reply_judge() that held
ALTER TABLE replies ADD COLUMN held TEXT;         -- why no mail went (or goes) out; NULL: it is mailed
ALTER TABLE replies ADD COLUMN created INTEGER NOT NULL DEFAULT 0;   -- when it was decided
ALTER TABLE replies ADD COLUMN send_job INTEGER REFERENCES jobs(id); -- the job that sends it
CREATE INDEX replies_list ON replies(list_name, created);
CREATE INDEX replies_author ON replies(author, created);
CREATE INDEX replies_effect ON replies(effect);
