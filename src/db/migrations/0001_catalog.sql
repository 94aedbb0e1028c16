-- The catalog in PostgreSQL (docs/catalog-database.md): one row per published snapshot, its
-- products, its changes against the snapshot before it, and a pointer to the current one.
-- Tables are unqualified: giftjobs runs every statement with its schema first in search_path.

CREATE TABLE catalog_snapshots (
  id bigserial PRIMARY KEY,
  -- The snapshot's name, as a file snapshot's directory: its ISO time, so name order is time order.
  name text NOT NULL UNIQUE,
  fetched_at timestamptz NOT NULL,
  api_version text,
  filters jsonb NOT NULL,
  product_count integer NOT NULL,
  pages integer NOT NULL,
  -- sha256 (hex) of the products' JSON texts, one a line, in order.
  checksum text NOT NULL,
  warnings jsonb NOT NULL DEFAULT '[]',
  -- manifest.json's fields, as a file snapshot has them.
  manifest jsonb NOT NULL,
  -- diff.json's document: what the CLI's `catalog diff` prints.
  diff jsonb NOT NULL,
  previous_name text,
  published_at timestamptz NOT NULL DEFAULT now(),
  -- The lines of a file snapshot's digests.txt (each code's record digest, in order): what the
  -- next sync's diff reads, in one value rather than from 100,000 rows.
  digests text
);

-- Base64 digests do not compress: stored out of line as they are.
ALTER TABLE catalog_snapshots ALTER COLUMN digests SET STORAGE EXTERNAL;

-- One partition per snapshot, catalog_products_<id>: a sync loads its partition as a table of its
-- own and attaches it at the end (its indexes built once, in bulk); retention drops partitions;
-- a query of the current snapshot reads its partition only.
CREATE TABLE catalog_products (
  snapshot_id bigint NOT NULL,
  -- Place in the snapshot, as received; a code the service sent twice has two rows.
  position integer NOT NULL,
  -- True on every row of a code sent more than once but its last: as in the file index, the
  -- last one received is the product (current_products leaves the others out).
  superseded boolean NOT NULL DEFAULT false,
  code text NOT NULL,
  name text,
  currency text,
  payout_type text,
  state text,
  availability text,
  is_orderable boolean NOT NULL,
  countries text[] NOT NULL,
  -- Money as the service writes it (decimal strings): fixed denominations, or an open range.
  denominations text[],
  min_value numeric,
  max_value numeric,
  -- The service's whole record.
  record jsonb NOT NULL,
  -- What giftjobs needs of the row: its order-check index entries (a JSON array, kept as text:
  -- only giftjobs reads it, and jsonb's parsing cost a tenth of the sync) and the diff's record
  -- digest (null on the second row of a repeated code).
  index_entries text NOT NULL,
  digest text,
  PRIMARY KEY (snapshot_id, position)
) PARTITION BY LIST (snapshot_id);

CREATE INDEX catalog_products_code ON catalog_products (snapshot_id, code);
CREATE INDEX catalog_products_countries ON catalog_products USING gin (countries);

-- Retention deletes a snapshot's changes with its row (src/catalog/pg-sync.ts): no foreign key,
-- whose check per row made a first snapshot's 100,000 'added' rows take five times as long.
CREATE TABLE catalog_changes (
  snapshot_id bigint NOT NULL,
  code text NOT NULL,
  name text,
  change text NOT NULL CHECK (change IN ('added', 'removed', 'changed')),
  -- For 'changed': one row per changed field, with its old and new value; else null.
  field text,
  old_value jsonb,
  new_value jsonb
);

CREATE INDEX catalog_changes_snapshot ON catalog_changes (snapshot_id);

-- One row at most: the snapshot applications and every giftjobs read.
CREATE TABLE catalog_current (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  snapshot_id bigint NOT NULL REFERENCES catalog_snapshots (id)
);

-- The current snapshot is compared as a value (an InitPlan), so that only its partition is read.
CREATE VIEW current_products AS
SELECT
  p.code,
  p.name,
  p.currency,
  p.payout_type,
  p.state,
  p.availability,
  p.is_orderable,
  p.countries,
  p.denominations,
  p.min_value,
  p.max_value,
  p.record,
  s.name AS snapshot,
  s.fetched_at
FROM catalog_products p
JOIN catalog_snapshots s ON s.id = p.snapshot_id
WHERE p.snapshot_id = (SELECT snapshot_id FROM catalog_current) AND NOT p.superseded;

CREATE VIEW recent_changes AS
SELECT
  s.fetched_at AS synced_at,
  s.name AS snapshot,
  s.previous_name AS previous_snapshot,
  ch.code,
  ch.name,
  ch.change,
  ch.field,
  ch.old_value,
  ch.new_value
FROM catalog_changes ch
JOIN catalog_snapshots s ON s.id = ch.snapshot_id;

CREATE INDEX catalog_snapshots_fetched_at ON catalog_snapshots (fetched_at);
