-- The batches the limiters wrote to the ledger (src/usage/schema.ts BATCHES_SCHEMA), kept a day: a batch sent again after a lost reply adds nothing.
CREATE TABLE IF NOT EXISTS usage_batches (id TEXT PRIMARY KEY, at INTEGER NOT NULL);
