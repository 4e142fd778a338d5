package protocol

import "strconv"

// Verdict is validate_fenced_header's answer.
type Verdict int

const (
	// VerdictValid: the frame's (owner, generation) is the live lease.
	VerdictValid Verdict = 1
	// VerdictStale: the frame's generation is below the known counter.
	VerdictStale Verdict = 0
	// VerdictNotLive: not the live lease, but not provably stale either.
	VerdictNotLive Verdict = -1
)

func (v Verdict) String() string {
	switch v {
	case VerdictValid:
		return "valid"
	case VerdictStale:
		return "stale"
	case VerdictNotLive:
		return "not-live"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}
