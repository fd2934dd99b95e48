-- The chain's registry at head office (PostgreSQL 15 or newer), run once as the server's superuser:
--   sudo -u postgres psql -v owner_password=… -f deploy/postgres/headoffice.sql
-- It makes the database and its owner. The owner migrates the schema and makes the coordinators' role:
--   BEACONMESH_DB_PASSWORD=… beacon-coordinator provision database \
--     --db "postgres://beaconmesh_owner@registry.hq.example:5432/beaconmesh?sslmode=verify-full"
-- which writes /etc/beaconmesh/credentials/beaconmesh_coordinator.db.pass: copy it to every store (mode 0600, owner
-- beaconmesh) and name it as databasePasswordFile in the store's coordinator config.

-- The owner: owns the schema (migrations), may create the coordinators' role, nothing else.
CREATE ROLE beaconmesh_owner LOGIN CREATEROLE NOSUPERUSER NOCREATEDB PASSWORD :'owner_password';
CREATE DATABASE beaconmesh OWNER beaconmesh_owner ENCODING 'UTF8' TEMPLATE template0;
\connect beaconmesh
-- Only the owner creates anything in the registry's schema (PostgreSQL 15 already denies PUBLIC).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
ALTER SCHEMA public OWNER TO beaconmesh_owner;
REVOKE ALL ON DATABASE beaconmesh FROM PUBLIC;

-- Erasure (`beacon-coordinator members purge`, hourly by beaconmesh-registry-purge.timer): as the owner it rewrites
-- the registry's tables (VACUUM FULL), then starts a new write-ahead log file and checkpoints, so that the files still
-- holding a forgotten member's rows are deleted. It needs these two rights, and the server setting
-- `wal_recycle = off` (postgresql.conf: otherwise old log files are renamed for reuse, contents and all).
GRANT pg_checkpoint TO beaconmesh_owner;
GRANT EXECUTE ON FUNCTION pg_switch_wal() TO beaconmesh_owner;
