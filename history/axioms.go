package history

// UndeclaredKeys is what the server did with a script that reaches keys not
// declared in KEYS (numkeys 0), the access spec 000 §Axioms A2 prohibits.
type UndeclaredKeys struct {
	// SameNodeErr is the error of a script writing two undeclared keys in
	// two slots of the node it runs on ("" = succeeded).
	SameNodeErr string
	// RemoteErr is the error of a script writing a local undeclared key and
	// then a key of another node ("" = succeeded).
	RemoteErr string
	// EarlierWriteApplied is true when, after RemoteErr, the script's first
	// (local) write is visible: the script was not atomic.
	EarlierWriteApplied bool
}
