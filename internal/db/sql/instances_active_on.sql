-- The active instances ({{active}}) on binding @binding right now.
SELECT count(*) FROM instances WHERE subscription_secret_name = @binding AND {{active}}
