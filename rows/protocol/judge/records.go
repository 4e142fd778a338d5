// Package judge holds the protocol row's records and pure checkers (spec 000
// §Conformance, Protocol choice; D3): what each pool connection negotiated
// (check.ClientConn, from CLIENT LIST) and every typed read of a reply whose
// shape differs between RESP2 and RESP3. Each checker is defined under a
// stable name (check.Define), so a scenario's judgement replays offline
// (`slotgate check --from`); the aliases are the names earlier histories
// stored it under.
package judge

// ShapeRead is one typed read of a reply whose shape differs between RESP2
// and RESP3 (ZSCORE: string vs double; HGETALL: flat array vs map): the raw
// reply's shape, what the client's decoder made of it, and what it must be.
type ShapeRead struct {
	// Op is the command, "ZSCORE" or "HGETALL".
	Op  string
	Key string
	// Shape is the raw reply's shape: "string", "float64", "array", "map",
	// "nil", or another Go type name.
	Shape string
	// Want and Got are canonical renderings of the expected and the decoded
	// value; DecodeErr is set when the decoder refused the reply.
	Want      string
	Got       string
	DecodeErr string
	// Err is a command error (no reply to decode).
	Err string
}
