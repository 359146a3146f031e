-- 012-build-config.sql - each build keeps the .config it was made with
-- (gzip, as consoles are), so that a review can link the whole config
-- as the kernel test robot and KernelCI do, not only name the fragment.
-- Builds from before have none (NULL).

ALTER TABLE builds ADD COLUMN config BLOB;        -- gzip of the build's .config, NULL when not read
