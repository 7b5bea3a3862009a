-- Creates the job's schema.
CREATE SCHEMA {{schema}}
