-- The nightly job prunes the paid memory past GIFTJOBS_REPEAT_WINDOW_DAYS, and doctor counts
-- what is kept past it (docs/architecture/repeats.md, "How long it is kept"): by time, so that
-- neither reads the whole table.
CREATE INDEX paid_rows_recorded_at ON paid_rows (recorded_at);
CREATE INDEX imported_files_imported_at ON imported_files (imported_at);
