-- Every row of the release history, oldest first.
SELECT * FROM {{schema}}.binding_releases ORDER BY id
