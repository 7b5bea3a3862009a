DROP TABLE binding_releases;
DROP TABLE binding_empty_since;
DROP TABLE binding_reservations;
DROP TABLE binding_candidates;
DROP TABLE binding_drift;
