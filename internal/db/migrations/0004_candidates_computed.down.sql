DROP TABLE candidates_computed;
