// Package exec owns colink's vectorized execution: operators that pull batches of column
// vectors through a pipeline, in the manner of CockroachDB's vectorized engine, and the
// fragments primproc runs next to the data. It knows nothing of sockets, storage or SQL:
// primproc plugs its scan in as a RecordStream, exemgr feeds the link's incoming streams in
// the same way, and the SQL planner (package sql) builds Fragments and operator trees.
//
// Subpackages: vec (types, vectors, batches, exact decimals, Arrow views) and expr (the
// expression IR and its kernels).
//
// # Operators
//
// Every operator implements Operator: Init, then Next until it returns a nil batch, then
// Close. Batches hold at most vec.DefaultBatchRows rows (by default), carry a selection
// vector, and are valid until the producer's next Next. Operators buffer rows only where
// they must (hash tables, sorts) and charge that memory to a per-query Budget; going over it
// fails the query with ErrMemoryLimit (MySQL error 1041). A panic on a goroutine the package
// starts (parallel workers, fragment workers, aggregate workers) fails only its query, with
// ErrInternal (1105, "internal error in <operator>: <value>"); the stack goes to the logger
// ContextWithLogger put in the context (default slog.Default()), never into the error.
//
// A budget made with NewBudgetPool also lends hash aggregates and join tables their large
// arrays from a recycling vec.Pool (primproc's one pool for all its queries), which they
// give back when they close.
//
//	NewSource(stream, types, n)          Arrow records -> batches (zero-copy views)
//	NewMaterializer(op, schema, n, a)    batches -> Arrow records of ~n rows (a RecordStream)
//	NewFilter(op, pred)                  rows where pred is TRUE (narrows the selection)
//	NewProject(op, exprs)                computed columns (column refs pass through)
//	NewHashJoin(probe, builds, t, spec)  joins: inner, left/right outer, semi, anti, mark
//	NewHashJoinWithTable(probe, table, spec)  probe a shared, pre-built JoinTable
//	                                     (JoinTable.AddRecords sizes it and, for a large
//	                                     build side, hashes in bulk)
//	NewHashAggregate(op, spec, phase)    GROUP BY + aggregates; phases complete, partial,
//	                                     merge, final (see AggPhase for the partial layout)
//	NewParallelAggregate(op, spec, phase, workers)  the same, its groups dealt by key hash
//	                                     over workers (exemgr's final phases); with about
//	                                     as many groups as rows, by partitions of each share
//	NewPartitionedAggregate(op, ..., part)  the same over rows producers dealt into a
//	                                     Partitioner (a fragment's combined aggregation)
//	NewSort(op, keys) NewTopN(op, keys, limit, offset) NewLimit(op, limit, offset)
//	NewDistinct(op) NewConcat(ops...)    DISTINCT, UNION ALL
//	ScalarSubquery(ctx, op) SingleRow(ctx, op)   one-row results (error 1242 beyond)
//	MergeStreams(ctx, streams...)        gather N primprocs' streams concurrently
//	StartParallel(ctx, workers, ...)     run workers, merge their records
//	Collect(ctx, op, names)              all rows as a vec.Table (tests, small results)
//
// # Fragments
//
// A Fragment (msgpack) is what exemgr sends a primproc: the scan (table, columns, zone-map
// predicates), then steps — filter, project, hash-join probes against build sides shipped
// with the fragment, and a partial aggregate, partial top-N or limit. BuildPipeline
// validates it (errors name the step and the problem) and runs it on Options.Threads
// workers that pull row groups from the shared scan stream; Pipeline.Next streams the
// output records and Pipeline.Stats reports rows and bytes scanned and produced and the
// workers' CPU time.
//
// # Types
//
// The engine's types and their Arrow layouts are the project's convention (INT int32,
// BIGINT int64, DECIMAL(p<=18) decimal64, wider decimal128(38,s), DATE date32, strings
// utf8, DOUBLE float64, boolean). Sums of decimals and integers accumulate exactly in 128
// bits (decimal(38,s)); AVG of decimals has scale s+4, rounded half away from zero, as
// MySQL's. Strings compare bytewise (binary collation).
package exec
