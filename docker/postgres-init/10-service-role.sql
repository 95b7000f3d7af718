-- Run once by the postgres image when its data volume is new. POSTGRES_USER (gateway) owns the
-- schema and runs the migrations (MIGRATIONS_DATABASE_URL); the service connects as this role
-- (DATABASE_URL), which the migrations grant only what the service needs: it may add audit events,
-- never change them (docs/operations.md, "Two database roles").
CREATE ROLE gateway_service LOGIN PASSWORD 'gateway_service';
