package history

import "time"

// Straggler is a pod of the previous phase that lingered after its
// Deployment replaced it: from Left it reported no phase gauge (it was
// terminating, in its grace period) while it kept serving the sessions it
// held; Gone is when it exited (zero if it outlived the history).
type Straggler struct {
	Pod   string
	Phase string
	Left  time.Duration
	Gone  time.Duration
	// Listed: the rollout still listed it while it terminated (the gate's
	// rule 2(b) could see it); Serving: it took new sessions meanwhile.
	Listed, Serving bool
}
