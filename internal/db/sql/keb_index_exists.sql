-- Whether KEB's instances table, on the search_path, carries the index
-- @index the read path counts through.
SELECT count(*) > 0 FROM pg_indexes WHERE tablename = 'instances' AND indexname = @index AND schemaname = current_schema()
