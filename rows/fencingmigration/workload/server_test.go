package workload

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/fixtures/fixturestest"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/internal/wait"
	"github.com/slotgate/slotgate/traffic"
)

// One standalone valkey-server serves the tests that need a real node
// (started on first use; the pure tests never pay for it).
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func TestMain(m *testing.M) { os.Exit(server.RunTests(m)) }

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// The probe reads through the fleet's own live pods, on both lanes, and
// what it records is what the row judges: the correct scripts' reads agree
// with the model's read rules and never fall below an acknowledged
// generation; the read mutants answer beside them, marked as variants.
func TestReadProbeReadsThroughTheFleet(t *testing.T) {
	topo := fixturestest.Get(t, server)
	tag := fmt.Sprintf("rp%x", time.Now().UnixNano())
	var reliable, huddle []fencing.Session
	for i := range 4 {
		reliable = append(reliable, fencing.Session{Community: tag, ID: fmt.Sprintf("r%d", i)})
		huddle = append(huddle, fencing.Session{Community: tag, ID: fmt.Sprintf("h%d", i)})
	}
	clock := traffic.NewClock()
	fleet, err := traffic.NewFleet(t.Context(), traffic.FleetOptions{Addr: topo.Addrs()[0], Backend: client.BackendGoRedis, Pods: 2,
		Reliable: reliable, Huddle: huddle, TTL: 2 * time.Second, Acquires: 2, ReleaseP: 0.2, Seed: 1}, clock, fencing.A)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Stop()
	probe := StartReadProbe(t.Context(), fleet, clock, ReadProbeOptions{
		Lanes:    map[traffic.Lane][]fencing.Session{traffic.LaneReliable: reliable, traffic.LaneHuddle: huddle},
		Variants: fencing.ReadMutants, Every: 5 * time.Millisecond, Seed: 2,
	})
	// A bound passing is judged by the sample count below.
	if err := wait.Within(t.Context(), 20*time.Second, 20*time.Millisecond, func(context.Context) error {
		if !probe.ReadSince(nil, 10) {
			return fmt.Errorf("a lane judged fewer than 10 samples")
		}
		return nil
	}); err != nil {
		t.Logf("read probe: %v", err)
	}
	ops, stats := probe.Stop()
	if stats.Samples < 20 {
		t.Fatalf("%d samples judged (%d unstable, %d failed), want 20", stats.Samples, stats.Unstable, stats.Failed)
	}
	pods := map[string]bool{}
	live, _ := fleet.LivePods()
	for _, p := range live {
		pods[p.Name] = true
	}
	var correct []history.ReadOp
	lanes, variants := map[string]int{}, 0
	for _, op := range ops {
		if !pods[op.Pod] || op.Phase != string(fencing.A) || op.Mix != "A" {
			t.Fatalf("read %v attributed to pod %s phase %s mix %q, want a live A pod of the fleet", op, op.Pod, op.Phase, op.Mix)
		}
		lanes[op.Lane]++
		if op.Variant != "" {
			variants++
			continue
		}
		correct = append(correct, op)
	}
	if lanes[string(traffic.LaneReliable)] == 0 || lanes[string(traffic.LaneHuddle)] == 0 {
		t.Errorf("reads per lane %v, want both lanes", lanes)
	}
	if variants == 0 {
		t.Errorf("no read mutant answered beside the real scripts")
	}
	var issued []history.FencingOp
	for _, op := range fleet.History() {
		issued = append(issued, op.FencingOp)
	}
	if r := check.ReadSide(correct, issued, check.ReadSideOptions{Name: "probe"}); r.Status != check.Pass {
		t.Errorf("the correct scripts' reads: %s %s\n%s", r.Status, r.Message, r.Counterexample)
	}
}
