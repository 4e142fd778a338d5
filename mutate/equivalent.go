package mutate

// Equivalents are mutants argued equivalent, by mutant ID (file, line,
// operator and a hash of the mutated source, so an entry applies only to
// exactly that mutated text). Each reason says why no row can or need
// kill it. Filled by triage of `make mutate` survivors (README).
var Equivalents = map[string]string{
	// Marconi's audit append script (--kind marconi-lua), triaged from a
	// `--kind marconi-lua` run (docs/MUTATION.md).
	"impl/marconi/audit/lua/append.lua:48:relational:0e3d9d": "idLess's `am < bm` → `am <= bm` sits under `if am ~= bm`: with am ≠ bm the two comparisons agree, so no input tells them apart",
	"impl/marconi/audit/lua/append.lua:61:swap-keys:43d118":  "`EXISTS KEYS[1]` (the stream) → `EXISTS KEYS[2]` (the writer offset): only this script writes either key, the first append creates both (XADD, then SET) in one atomic call, and neither is ever deleted (an XADD trim leaves the key), so the two EXISTS agree on every reachable state",
	"impl/marconi/audit/lua/append.lua:74:relational:872ae4": "`pending > 0` → `pending >= 0` only adds the XPENDING call when nothing is pending, whose summary reply then has a nil lowest id (false in Lua), so `if p[2] and …` leaves minid alone: the same trim, one read more",
	"impl/marconi/audit/lua/append.lua:50:relational:0f4dd5": "idLess's `as < bs` → `as <= bs` differs only for equal ids, and both callers then set minid to the id it already equals (`if idLess(x, minid) then minid = x`): the trim bound is the same",
}
