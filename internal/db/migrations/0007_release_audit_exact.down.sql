-- The unique index goes with intent_id. Rows keep the times the database
-- stamped them with.
ALTER TABLE binding_releases
    ALTER COLUMN created_at DROP DEFAULT,
    DROP COLUMN intent_id,
    DROP COLUMN resource_version;
