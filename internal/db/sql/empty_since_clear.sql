-- Forgets every empty binding: the set is replaced whole.
DELETE FROM {{schema}}.binding_empty_since
