package workload

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/rows/marconi/judge"
)

// MeshIndexProbes reads, for every session of h whose deregister was
// acknowledged (ended, not left to expire), whether its tenant's
// SessionStore index still holds it (ZSCORE on the server, through pool;
// the keys are store's). Spec 002 Stage 2: SessionStore.release drops the
// record and the index entry together (release.lua); the index is what
// the warm-up reads, so a member whose session was released is a dead
// entry every warm-up walks until its score lapses. Call it after the
// run: the probes are facts for a checker, not a verdict.
func MeshIndexProbes(ctx context.Context, pool client.Pool, store *marconi.SessionStore, h judge.MeshHistory) ([]judge.MeshIndexProbe, error) {
	var out []judge.MeshIndexProbe
	for _, s := range h.Sessions {
		if s.Ended == 0 || s.Expired {
			continue
		}
		tenant, _, ok := strings.Cut(s.Recipient, "/")
		if !ok || tenant == "" {
			return nil, fmt.Errorf("probe index of %s: recipient %q has no tenant", s.SessionID, s.Recipient)
		}
		key := store.IndexKey(tenant)
		v, err := pool.Do(ctx, client.NewCmd("ZSCORE", []string{key}, s.SessionID))
		if err != nil {
			return nil, fmt.Errorf("probe index of %s: zscore %s: %w", s.SessionID, key, err)
		}
		p := judge.MeshIndexProbe{SessionID: s.SessionID, Tenant: tenant, Index: key}
		switch t := v.(type) {
		case nil:
		case float64: // RESP3 double
			p.Member, p.Score = true, t
		default:
			str, err := client.AsString(v)
			if err != nil {
				return nil, fmt.Errorf("probe index of %s: zscore %s: %w", s.SessionID, key, err)
			}
			p.Member = true
			p.Score, _ = strconv.ParseFloat(str, 64)
		}
		out = append(out, p)
	}
	return out, nil
}
