DROP TABLE pool_history;
