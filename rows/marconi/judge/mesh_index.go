package judge

import (
	"fmt"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// marconiReleasedUnindexed judges the SessionStore's session index after a
// run (spec 002 Stage 2, controller_service.deregister_session →
// SessionStore.release; impl's release.lua): a session whose deregister
// was acknowledged is gone from its tenant's index as well as its record.
// Readers skip a member whose record is gone and the warm-up prunes one
// whose score has passed, so a dead member changes no route: it only
// stays, walked by every warm-up, until its expiry — which is why only
// this check, reading the index itself, can see it. It is Unknown when
// fewer than minJudged released sessions were probed.
func marconiReleasedUnindexed(probes []MeshIndexProbe, minJudged int) check.Result {
	const name = "marconi-released-unindexed"
	if len(probes) < max(minJudged, 1) {
		return check.Unknownf(name, "%d released sessions probed; need %d", len(probes), max(minJudged, 1))
	}
	var kept []string
	for _, p := range probes {
		if p.Member {
			kept = append(kept, fmt.Sprintf("%s still in %s (score %.0f)", p.SessionID, p.Index, p.Score))
		}
	}
	if len(kept) > 0 {
		return check.Failf(name, strings.Join(check.Elide(kept, 5), "\n"), "%d of %d sessions released with a 200 are still members of their tenant's session index", len(kept), len(probes))
	}
	return check.Passf(name, "none of the %d sessions released with a 200 is left in its tenant's session index (ZSCORE)", len(probes))
}
