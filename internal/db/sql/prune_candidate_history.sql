-- Forgets the versions of candidate rows closed more than @keep seconds
-- ago. A row's open version (valid_to NULL) is the table as it stands and
-- is never touched.
DELETE FROM {{schema}}.candidate_history WHERE valid_to < now() - make_interval(secs => @keep)
