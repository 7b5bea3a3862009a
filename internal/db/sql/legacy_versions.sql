-- The versions the legacy migrator recorded ({{legacy}} is its table), in
-- order.
SELECT version FROM {{schema}}.{{legacy}} ORDER BY version
