-- sked schema, version 10, Oracle: a placeholder (see
-- sql/postgresql/010_reserved.sql); the scopes change's step 10
-- replaces it.
-- (tests/unit/test_oracle.c wants a statement in every step: a harmless
-- one)
COMMENT ON TABLE {p}node IS 'sked worker nodes';
