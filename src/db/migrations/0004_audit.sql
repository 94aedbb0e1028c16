-- The audit trail (docs/architecture/audit.md): one row per action that can spend money or
-- change what is spent, appended in one chain (each entry carries the sha256 of the one before).
-- Rows are never changed or removed: the triggers below refuse UPDATE, DELETE and TRUNCATE.

CREATE TABLE audit_entries (
  -- The entry's number in the chain, from 1, without gaps.
  seq bigint PRIMARY KEY,
  -- When the action was recorded (also in `entry`, which is what verify reads).
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  campaign text,
  -- The entry's canonical JSON (keys sorted, no spaces), its hash included.
  entry text NOT NULL,
  -- sha256 (hex) of the entry without this field: the next entry's `prev`.
  hash text NOT NULL
);

CREATE INDEX audit_entries_campaign ON audit_entries (campaign, seq);

CREATE FUNCTION audit_entries_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_entries is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_entries_append_only
  BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_refuse_change();

CREATE TRIGGER audit_entries_no_truncate
  BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_refuse_change();
