-- Whether KEB's instances table, on the search_path, carries the index
-- @index the read path counts through, valid: a concurrent build still
-- running, or one that failed, leaves it INVALID (indisvalid false, and
-- indisready false before its build phase), which the read path treats as
-- missing, and so does this.
SELECT count(*) > 0
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class x ON x.oid = i.indexrelid
JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND t.relname = 'instances' AND x.relname = @index
  AND i.indisvalid AND i.indisready
