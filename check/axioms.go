package check

import (
	"fmt"

	"github.com/slotgate/slotgate/history"
)

// UndeclaredKeyHazard checks the measured refinement of A2 on a multi-shard
// cluster: undeclared keys bypass the declared-keys slot check (two slots of
// one node succeed silently), and a remote undeclared key fails only after
// the script's earlier writes were applied. Pass means the hazard is exactly
// as the spec's refinement states — which is why the locality validator must
// reject undeclared access mechanically.
func UndeclaredKeyHazard(o history.UndeclaredKeys) Result {
	const name = "undeclared-key-hazard"
	obs := []string{
		fmt.Sprintf("two undeclared keys in two slots of one node: %s", orOK(o.SameNodeErr)),
		fmt.Sprintf("undeclared remote key: %s", orOK(o.RemoteErr)),
		fmt.Sprintf("earlier local write applied before the remote error: %v", o.EarlierWriteApplied),
	}
	var r Result
	switch {
	case o.SameNodeErr != "":
		r = fail(name, obs[0], "the server refused undeclared keys on one node: the refinement does not hold")
	case o.RemoteErr == "":
		r = fail(name, obs[1], "a script reached an undeclared key that is not local and succeeded: no remote key was exercised")
	case !o.EarlierWriteApplied:
		r = fail(name, obs[2], "the remote error rolled back the earlier write: scripts stayed atomic")
	default:
		r = pass(name, "undeclared keys bypass the slot check; a remote one errors after earlier writes applied (partial script)")
	}
	r.Observed = obs
	return r
}

func orOK(err string) string {
	if err == "" {
		return "succeeded"
	}
	return "error: " + err
}
