package history

// ArchiverRead is one XREADGROUP the PG archiver sent, as recorded on its
// command pool: the command's words and how many entries its reply held.
type ArchiverRead struct {
	Cmd     []string
	Entries int
}

// StreamEntry is one entry of a tenant's Marconi Cache stream, in stream
// order: its ID, the signal it carries and the audit-queue offset the
// writer stamped on it ("<gen>:<seq>").
type StreamEntry struct {
	ID, SignalID, Offset string
}
