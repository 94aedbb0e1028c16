-- The paid memory (docs/architecture/repeats.md): who each campaign's recorded rows pay what, so
-- an import can refuse a row another campaign paid. Written by an import a batch at a time,
-- committed before the batch reaches Redis, as the order journal is.

-- One row per row an import recorded.
CREATE TABLE paid_rows (
  campaign text NOT NULL,
  -- sha256 of payee, product, face value and currency (src/orders/paid-fingerprint.ts).
  fingerprint text NOT NULL,
  -- The row's identity in its campaign's ledger (a hash: no e-mail or reference in clear).
  identity text NOT NULL,
  -- The row's line in the file it was imported from.
  line integer NOT NULL,
  currency text NOT NULL,
  -- Face value in the currency's minor units.
  face_units bigint NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX paid_rows_fingerprint ON paid_rows (fingerprint);
CREATE INDEX paid_rows_campaign ON paid_rows (campaign);

-- One row per import that recorded rows: the sha256 (hex) of the file's bytes.
CREATE TABLE imported_files (
  campaign text NOT NULL,
  file_sha256 text NOT NULL,
  rows integer NOT NULL,
  imported_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX imported_files_sha256 ON imported_files (file_sha256);
