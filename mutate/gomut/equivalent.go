package gomut

// KnownEquivalent maps a mutant ID to why it is equivalent: no run of any
// row can tell it from the original, so it is reported with the reason and
// left out of the kill rate. Each entry is argued from the code, not from a
// survived run.
var KnownEquivalent = map[string]string{}
