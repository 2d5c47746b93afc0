// Package storage owns colink's data at rest: tables stored as sets of immutable Parquet
// segment files, the catalog that names them, the zone maps (per row group, per column
// min/max) that let scans skip row groups, and the cache of decoded Arrow columns that
// primproc scans from.
//
// # On disk
//
//	DIR/LOCK                                  flock: one process owns a store at a time
//	DIR/CATALOG                               the current catalog (header line + JSON body)
//	DIR/tables/<table>/seg-<id>.parquet       immutable segment files
//	DIR/tables/<table>/seg-<id>.del-<version> immutable delete bitmaps (a newer one supersedes)
//	DIR/tables/<table>/seg-<id>.pdel-<version> a prepared transaction's own deletes
//
// A segment is a plain Parquet file (INT64 DECIMAL for decimals, DATE, UTF8 strings, one
// row group per RowGroupRows rows, min/max statistics on), so DuckDB and other tools read it
// with read_parquet('DIR/tables/lineitem/*.parquet') while the store is quiescent (they see
// rows deleted since the load, which only colink's delete bitmaps hide). Its key-value
// metadata carries the table's Arrow schema (with colink.sql_type field metadata) as JSON.
//
// # Durability and versions
//
// The catalog is the single source of truth: a file that exists but is not named by it does
// not exist. A commit writes every new segment, fsyncs it and its directory, then writes the
// new catalog to a temporary file, fsyncs it, renames it over CATALOG and fsyncs DIR. A crash
// at any point therefore leaves the old catalog or the new one; files of an interrupted
// transaction are unreferenced and removed on the next Open. A commit that fails before the
// rename removes its files; once the rename is done the files belong to the new catalog: if
// DIR's fsync then fails, the new version is published anyway and the commit's error wraps
// ErrNotDurable, and the previous version's files are kept until a later fsync of DIR
// succeeds, since a crash before it may bring the old catalog back.
//
// Each commit makes a new catalog version. Inserts add segments (Txn.Append); deletes write a
// new bitmap file per touched segment holding all of its deleted rows (Txn.Delete); scans skip
// deleted rows and row groups with no live rows. Readers pin a version with Store.Snapshot and see
// exactly that state until they release it; files that a newer version no longer names are
// deleted only once no pinned snapshot names them. Every change goes through a Txn, whose
// operations (replace a table, append segments, delete rows, drop) apply atomically, across
// tables too.
//
// # Distributed writes, row IDs and compaction
//
// A change that spans several stores (several primprocs) commits in two phases
// (Txn.Prepare, then Store.CommitPrepared or Store.AbortPrepared; see prepare.go): a
// prepared transaction is durable and named in the catalog but invisible until its outcome
// is applied, and survives restarts. A scan may ask for the RowIDColumn pseudo column, whose
// values (segment and ordinal, plus a caller's tag) name rows for Txn.Delete. Store.Compact
// rewrites a table's small segments and those with many deleted rows into full segments of
// their live rows, atomically (compact.go).
//
// # Statistics
//
// Besides the zone maps, the catalog keeps per segment and column a distinct-value sketch
// (package storage/ndv: exact up to 128 values, else a HyperLogLog of 4096 registers; at
// most about 2 KiB encoded) that the writer fills as it encodes each row group;
// Snapshot.ColumnSketches merges them over a table's segments, and Snapshot.ColumnRanges
// folds the zone maps, for the planner's statistics. Both cover every stored row, deleted
// ones included, until a compaction rewrites the segment. Building the sketches costs about
// 85 ns per lineitem row (16 columns; BenchmarkSketchLineitem), about 4% of a load's CPU
// (BenchmarkLoadLineitem with generation); Store.AddMissingSketches computes them for a
// store written before they were kept.
//
// # Integrity
//
// The catalog records, per segment, the file size, a CRC-32C of the Parquet footer, a
// CRC-32C of every column chunk and of the whole file. The footer is verified when a segment is
// first opened and each column chunk whenever it is read from disk, so a damaged or truncated
// file fails with an error naming it rather than giving a wrong answer.
package storage
