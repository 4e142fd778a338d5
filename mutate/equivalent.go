package mutate

// Equivalents are mutants argued equivalent, by mutant ID (file, line,
// operator and a hash of the mutated source, so an entry applies only to
// exactly that mutated text). Each reason says why no row can or need
// kill it. Filled by triage of `make mutate` survivors (README).
var Equivalents = map[string]string{}
