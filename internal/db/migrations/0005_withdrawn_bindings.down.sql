DROP TABLE withdrawn_bindings;
