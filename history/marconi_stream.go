package history

// StreamEntry is one entry of a tenant's Marconi Cache stream, in stream
// order: its ID, the signal it carries and the audit-queue offset the
// writer stamped on it ("<gen>:<seq>").
type StreamEntry struct {
	ID, SignalID, Offset string
}
