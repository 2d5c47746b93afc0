// Package vec owns colink's in-memory column vectors: the value types the engine computes
// with (Type), typed column vectors (Vec) and batches of them with a selection vector
// (Batch), typed scalar values (Datum), exact 128-bit decimal arithmetic (Int128), calendar
// dates, zero-copy views of Arrow arrays and their conversion back to Arrow, a recycling
// Arrow allocator (Pool), and a small text format for batches used by tests and debugging.
//
// Invariants every user relies on:
//
//   - A Vec holds exactly one payload slice, chosen by Type.ID: I32 (Int32, Date32),
//     I64 (Int64, Decimal64, Datetime), F64 (Float64), D128 (Decimal128), Bool (Bool), or
//     Offsets+Bytes (String, Arrow layout: row i is Bytes[Offsets[i]:Offsets[i+1]]).
//   - Nulls is nil when no row is NULL; otherwise Nulls[i] is true for a NULL row.
//   - The payload slot of a NULL row is unspecified: a kernel that produces a NULL may leave
//     any value there, and Arrow arrays from the link carry whatever the sender had (for
//     strings the offsets still ascend, so the layout stays valid). The rule is that every
//     consumer ignores it: a NULL is one value for hashing, grouping, DISTINCT, joins and
//     sorting whatever bytes lie under its null bit. Keys are hashed in one place (package
//     exec's hashRows), compared for equality in one place (RowsEqual) and ordered by
//     comparators that test Nulls first; exec's random tests write garbage under every
//     NULL to keep it so.
//   - A Batch's Sel, when not nil, lists the active row positions in strictly ascending
//     order; kernels write results at those positions so columns stay aligned.
//   - Decimal values are unscaled integers: a Decimal(p,s) value v means v / 10^s. No
//     floating point is used on the decimal path.
package vec
