// Package judge holds the locality row's records and pure checkers (spec 000
// §Conformance, "Locality contract"; Axiom A2): the static validator's result
// over ./impl (validate.Result), the known-bad corpus and ./impl with its
// call-site declarations stripped as its controls, the hand fallback table
// compared with the server's key specs, and the runtime twin's history
// (check.LocalityHistory, recorded by validate/locality). Each checker is
// defined under a stable name (check.Define), so a scenario's judgement
// replays offline (`slotgate check --from`); the aliases are the names
// earlier histories stored it under.
package judge

// TableAgreement is what the row compared: the hand fallback table of key
// positions against the server's COMMAND key specs (validate.Table.Agree),
// one line per command they place differently.
type TableAgreement struct {
	Source                       string // the server table's source (validate.Table.Source)
	ServerCommands, HandCommands int
	Disagreements                []string
}

// Workload is how many calls of multi-key-capable commands
// (check.LocalityHistory's Grouping) one reference workload sent through its
// twin.
type Workload struct {
	Name     string
	Grouping int
}
