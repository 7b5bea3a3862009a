-- Forgets the compared picks and the history that only served them, older
-- than @keep seconds. The newest rewrite stays whatever its age: it says
-- how old the table is.
WITH picks AS (
    DELETE FROM {{schema}}.shadow_picks WHERE picked_at < now() - make_interval(secs => @keep)
), versions AS (
    DELETE FROM {{schema}}.candidate_history WHERE valid_to < now() - make_interval(secs => @keep)
)
DELETE FROM {{schema}}.candidate_rewrites
WHERE written_at < now() - make_interval(secs => @keep)
  AND written_at < (SELECT max(written_at) FROM {{schema}}.candidate_rewrites)
