-- Records version @version, taken over from the legacy migrator, in
-- golang-migrate's table ({{migrations}}).
INSERT INTO {{schema}}.{{migrations}} (version, dirty) VALUES (@version, false)
