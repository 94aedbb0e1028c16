-- The order journal, its tags markers and the product overrides (docs/catalog-database.md,
-- "The order journal and product overrides").

-- One row per order an import records, or per move of rows to a new generation (a worker
-- after a 4xx answer, `orders retry --new-key`), committed before Redis hears of it: the
-- file journal's line {"g", "k", "i", "a"} (docs/architecture/keys-and-exactly-once.md,
-- "Lost ledger"). Readers take a campaign's rows in `seq` order, the order they were written.
CREATE TABLE order_journal (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  campaign text NOT NULL,
  -- g: the generation at import, or the one the rows moved to.
  generation integer NOT NULL CHECK (generation >= 0),
  -- k: the X-Idempotency-Key, orderKey(campaign, generation, identities).
  order_key text NOT NULL,
  -- i: the rows' identities (hashes: no e-mail or reference in clear), sorted.
  identities text[] NOT NULL CHECK (cardinality(identities) > 0),
  -- a: the fingerprint of the API key the order is expected to be sent with.
  api_key_fingerprint text,
  journaled_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX order_journal_campaign_seq ON order_journal (campaign, seq);

-- A campaign whose orders carry the tags naming campaign and key (src/orders/order-tags.ts):
-- the file journal's `order-tags` marker beside `orders.ndjson`.
CREATE TABLE order_tags_marker (
  campaign text PRIMARY KEY,
  written_at timestamptz NOT NULL DEFAULT now()
);

-- The newest state the service pushed for each product (`product.update`), recorded only
-- when newer than the one held (one upsert with a WHERE on pushed_at_ms).
CREATE TABLE product_overrides (
  product_code text PRIMARY KEY,
  -- The message's `timestamp` in ms since the epoch: what messages are ordered by.
  pushed_at_ms bigint NOT NULL,
  -- The message's `timestamp` as the service wrote it.
  pushed_timestamp text NOT NULL,
  -- The message's `new_state`: price_multiplier, is_orderable, denominations when sent.
  state jsonb NOT NULL,
  is_orderable boolean GENERATED ALWAYS AS ((state ->> 'is_orderable')::boolean) STORED,
  received_at timestamptz NOT NULL
);
