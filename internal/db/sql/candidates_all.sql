-- The candidate table, every row, in no order.
SELECT * FROM {{schema}}.binding_candidates
