DROP TABLE shadow_picks;
DROP TABLE candidate_rewrites;
DROP TABLE candidate_history;
