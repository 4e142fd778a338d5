package fault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// RefuseWrites puts one node at its memory limit for Duration: maxmemory 1
// byte under the noeviction policy, so the server refuses every command
// that may grow memory (SET, ZADD, …) with an OOM error while reads and
// deletions (GET, MGET, ZRANGEBYSCORE, DEL, ZREM, ZREMRANGEBYSCORE) still
// succeed — a primary full under noeviction, the production default policy.
// Both settings are restored afterwards. Unlike a cut link, the node stays
// readable, so a scenario can watch what the refused writes failed to
// keep alive while the fault lasts.
type RefuseWrites struct {
	Node     string
	Duration time.Duration
}

// Name implements Fault.
func (f RefuseWrites) Name() string { return "node/oom-noeviction" }

// Available implements Fault.
func (f RefuseWrites) Available(t *fixtures.Topology) error {
	_, err := pick(t, []string{f.Node})
	return err
}

// Inject implements Fault.
func (f RefuseWrites) Inject(ctx context.Context, t *fixtures.Topology) (window Window, err error) {
	nodes, err := pick(t, []string{f.Node})
	if err != nil {
		return Window{}, err
	}
	n := nodes[0]
	var was [2]string
	for i, k := range []string{"maxmemory", "maxmemory-policy"} {
		v, err := n.Do(ctx, "CONFIG", "GET", k)
		if err != nil {
			return Window{}, err
		}
		arr, ok := v.([]any)
		if !ok || len(arr) != 2 {
			return Window{}, fmt.Errorf("%s config get %s: unexpected reply %v", n.Name(), k, v)
		}
		if was[i], ok = arr[1].(string); !ok {
			return Window{}, fmt.Errorf("%s config get %s: unexpected value %v", n.Name(), k, arr[1])
		}
	}
	w := Window{Fault: f.Name(), Target: n.Name(), Start: time.Now()}
	// Restored whatever happens once the SET was sent (a SET that timed
	// out may still have been applied), with a fresh, bounded context: a
	// cancelled scenario must not leave the node refusing writes for the
	// next one, nor wait forever on a node that stopped answering.
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, rerr := n.Do(rctx, "CONFIG", "SET", "maxmemory", was[0], "maxmemory-policy", was[1]); rerr != nil {
			err = errors.Join(err, fmt.Errorf("restore memory limit of %s: %w", n.Name(), rerr))
		}
		w.End = time.Now()
		window = w
	}()
	if _, err := n.Do(ctx, "CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "1"); err != nil {
		return w, err
	}
	select {
	case <-time.After(f.Duration):
	case <-ctx.Done():
	}
	return w, ctx.Err()
}
