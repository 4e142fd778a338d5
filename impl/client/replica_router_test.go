package client

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"
)

// TestReplicaRouter: the selector skips a replica only while it cools down,
// charges a failure to the replica it picked (never to the primary), and
// falls back to the primary when every replica is cooling.
func TestReplicaRouter(t *testing.T) {
	r := newReplicaRouter(time.Hour)
	nodes := []valkey.NodeInfo{{Addr: "primary"}, {Addr: "r1"}, {Addr: "r2"}}
	const slot = 7 // 7 % 2 healthy replicas → the second
	if got := r.selectNode(slot, nodes); got != 2 {
		t.Fatalf("pick = %d, want 2 (stable per slot)", got)
	}
	if got := r.selectNode(slot, nodes); got != 2 {
		t.Fatalf("second pick = %d, want the same replica", got)
	}
	if !r.replicaFailed(slot) {
		t.Fatal("a failed replica read was not charged to its replica")
	}
	if got := r.selectNode(slot, nodes); got != 1 {
		t.Fatalf("pick after r2 failed = %d, want 1 (r1)", got)
	}
	if !r.replicaFailed(slot) {
		t.Fatal("r1's failure was not charged")
	}
	if got := r.selectNode(slot, nodes); got != 0 {
		t.Fatalf("pick with every replica cooling = %d, want 0 (the primary)", got)
	}
	if r.replicaFailed(slot) {
		t.Fatal("a failed read on the primary cooled a replica")
	}
	if got := r.selectNode(8, nodes[:1]); got != 0 {
		t.Fatalf("pick without replicas = %d, want 0", got)
	}

	expired := newReplicaRouter(-time.Second) // every cool-down already over
	expired.selectNode(slot, nodes)
	expired.replicaFailed(slot)
	if got := expired.selectNode(slot, nodes); got != 2 {
		t.Fatalf("pick after the cool-down = %d, want the replica back (2)", got)
	}
}

// TestReplicaGone: only errors that say the node is unusable move reads off
// a replica; a server's answer about the key or slot does not.
func TestReplicaGone(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{context.DeadlineExceeded, true},
		{errors.New("read tcp: connection reset by peer"), true},
		{nil, false},
		{valkey.Nil, false},
	} {
		if got := replicaGone(c.err); got != c.want {
			t.Errorf("replicaGone(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
