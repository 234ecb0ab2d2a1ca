#!/bin/sh
# Run once by the postgres image when its volume is new (/docker-entrypoint-initdb.d).
# console_owner owns the database and its tables and runs the migrations; console_app, which
# the console's processes use, may read and write rows but not alter, drop or truncate a
# table, nor disable the audit log's triggers.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v owner_password="$CONSOLE_OWNER_PASSWORD" -v app_password="$CONSOLE_APP_PASSWORD" <<'SQL'
CREATE ROLE console_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE console_app LOGIN PASSWORD :'app_password';
CREATE DATABASE console OWNER console_owner;
\connect console
ALTER SCHEMA public OWNER TO console_owner;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO console_app;
ALTER DEFAULT PRIVILEGES FOR ROLE console_owner IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO console_app;
ALTER DEFAULT PRIVILEGES FOR ROLE console_owner IN SCHEMA public
    GRANT USAGE, SELECT ON SEQUENCES TO console_app;
SQL
