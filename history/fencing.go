package history

import (
	"fmt"
	"time"
)

// FencingOpKind is one operation of the fenced session directory.
type FencingOpKind string

const (
	OpAcquire  FencingOpKind = "acquire"
	OpRenew    FencingOpKind = "renew"
	OpRelease  FencingOpKind = "release"
	OpValidate FencingOpKind = "validate"
	// OpKnown is a read of the session's generation counter
	// (known_generation, through lookup): Gen holds the value read.
	OpKnown FencingOpKind = "known"
	// OpMerge is the operator's max-merge of one session's two generation
	// counters (the backfill or the reverse merge, spec 000 §The protocol).
	OpMerge FencingOpKind = "merge"
)

// FencingOp is one recorded call against the directory: what was asked, what
// came back, and when (monotonic offsets from the scenario start).
type FencingOp struct {
	Client  int
	Session string
	Kind    FencingOpKind
	Owner   string
	// Gen is the caller's generation for renew/release/validate, and the
	// issued generation for a successful acquire.
	Gen int64
	// OK: acquired / renewed / released; for validate, Verdict holds the answer.
	OK bool
	// HolderGen and HolderOwner are the holder reported by a refused
	// acquire (the acquire script's {0, holder_generation, holder_owner}:
	// the lease a pod redirects the frame to).
	HolderGen   int64
	HolderOwner string
	Verdict     int
	// Unknown marks an operation whose outcome was not observed (timeout,
	// dropped connection): it may or may not have taken effect.
	Unknown bool
	Call    time.Duration
	Return  time.Duration
}

func (o FencingOp) String() string {
	switch {
	case o.Unknown:
		return fmt.Sprintf("[%s] %s %s owner=%s gen=%d → unknown", o.Session, o.Kind, "", o.Owner, o.Gen)
	case o.Kind == OpAcquire && o.OK:
		return fmt.Sprintf("[%s] acquire owner=%s → gen %d @%v", o.Session, o.Owner, o.Gen, o.Return)
	case o.Kind == OpAcquire:
		return fmt.Sprintf("[%s] acquire owner=%s → held by %q at gen %d @%v", o.Session, o.Owner, o.HolderOwner, o.HolderGen, o.Return)
	case o.Kind == OpValidate:
		return fmt.Sprintf("[%s] validate owner=%s gen=%d → %d @%v", o.Session, o.Owner, o.Gen, o.Verdict, o.Return)
	case o.Kind == OpKnown:
		return fmt.Sprintf("[%s] known_generation → %d @%v", o.Session, o.Gen, o.Return)
	}
	return fmt.Sprintf("[%s] %s owner=%s gen=%d → %v @%v", o.Session, o.Kind, o.Owner, o.Gen, o.OK, o.Return)
}
