-- Since when each binding has been seen empty.
SELECT * FROM {{schema}}.binding_empty_since
