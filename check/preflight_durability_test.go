package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
)

func TestDurabilityReady(t *testing.T) {
	want := check.DurabilityWant{MinReplicas: 1, LeaseTTL: 30 * time.Second, Renew: 10 * time.Second}
	good := check.DurabilitySample{Node: "p0", Cluster: true, Replicas: 1, ReplicasOnline: 1, MinReplicasToWrite: 0, MinReplicasMaxLag: 10, NodeTimeout: 15 * time.Second, Persistence: true, RDBSave: "3600 1"}
	if r := check.DurabilityReady([]check.DurabilitySample{good}, want); r.Status != check.Pass || !strings.Contains(strings.Join(r.Observed, "\n"), "min-replicas-to-write 0") {
		t.Fatalf("good primary: %v %q", r, r.Observed)
	}
	noReplica := good
	noReplica.ReplicasOnline = 0
	if r := check.DurabilityReady([]check.DurabilitySample{good, noReplica}, want); r.Status != check.Fail {
		t.Fatalf("a primary without an online replica passed: %v", r)
	}
	slow := good
	slow.NodeTimeout = 20 * time.Second
	if r := check.DurabilityReady([]check.DurabilitySample{slow}, want); r.Status != check.Fail || !strings.Contains(r.Counterexample, "outlasts every lease") {
		t.Fatalf("a node timeout of TTL − renew passed: %v", r)
	}
	refused := good
	refused.NodeTimeout, refused.ConfigErr = 0, "ERR unknown command 'CONFIG'"
	if r := check.DurabilityReady([]check.DurabilitySample{refused}, want); r.Status != check.Unknown {
		t.Fatalf("a cluster whose node timeout is unreadable: want unknown, got %v", r)
	}
	unread := check.DurabilitySample{Node: "p1", Err: "connection refused"}
	if r := check.DurabilityReady([]check.DurabilitySample{good, unread}, want); r.Status != check.Unknown {
		t.Fatalf("an unread primary: want unknown, got %v", r)
	}
	if r := check.DurabilityReady(nil, want); r.Status != check.Unknown {
		t.Fatalf("nothing read: want unknown, got %v", r)
	}
}
