package fencingmigration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// A late old-image acquire (spec 000 §Safety theorems hold under E1; E1
// retires processes, not what they already sent): an A pod's acquires
// still in the network when the operator backfills and observes the old
// keyspace drained. The delay is real: the A pod's connection runs through
// the node's proxy with an upstream latency longer than the backfill and
// the C-gate's observation, as a segment an A pod's kernel retransmits
// after a partition heals; the pod is a raw connection that never
// reconnects or retries, as a dead process cannot. The operator of the
// reference runbook cuts the relay connections that were open at full-B
// before the backfill (fencing.ConnectionWatermark,
// fencing.CutRetiredConnections); the spec's runbook as written does not,
// and is the variant. Per backend: the operator's CLIENT LIST reaches it
// through the client library (valkey-go answers RESP3).

var _ = Describe("fencing-migration late segment", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(harness.Scenario{
			Name: "fencing-migration/late-segment/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "an A pod's acquires delayed in the network past the backfill and the C-gate's observed-zero drain take no authority: the operator cuts the connections open at full-B before the backfill; T1 (one live lease per session across both keyspaces) and T2 (no generation issued twice) hold (000 §Safety theorems, §The Fencing Migration, Deployment Gate rule 3)",
			Run:  func(ctx SpecContext) report.Check { return lateSegment(ctx, b) },
		})
	}
})

const (
	lateSessions = 6
	// lateDelay holds the A pod's segments in the network: longer than the
	// cut, the backfill and the drain observation take.
	lateDelay = 1500 * time.Millisecond
	// lateTTL is long enough that every lease granted here is still live
	// when the run reads both keyspaces: a fork cannot hide behind expiry.
	lateTTL = 20 * time.Second
	// lateMargin is how long past lateDelay the run waits before it reads
	// what the delayed segments did.
	lateMargin = 500 * time.Millisecond
	// lateAPod is the A pod's CLIENT SETNAME.
	lateAPod = "relay-a-late"
)

// lateRun is one run of the late-segment schedule.
type lateRun struct {
	history []history.MigrationOp
	samples []history.KeyspaceSample
	gateAt  time.Duration // when the C-gate observed the old keyspace drained
	gateOld int           // what it observed
	cut     []string      // the connections the operator closed, by name
}

func lateSegment(ctx SpecContext, b client.Backend) report.Check {
	ref := lateSchedule(ctx, b, true)
	bad := lateSchedule(ctx, b, false)
	judge := func(r lateRun, premises ...check.Result) check.Result {
		return check.All("fencing-migration-late-segment", append([]check.Result{
			check.MigrationSingleAuthorityCheck.Judge(check.MigrationSingleAuthorityInput{Ops: r.history, TTL: lateTTL, Slack: slack}),
			check.MigrationGenerationsCheck.Judge(r.history),
			check.ObservedSingleAuthorityCheck.Judge(check.ObservedSingleAuthorityInput{Samples: r.samples, MinSamples: 1}),
		}, premises...)...)
	}
	ev := harness.Evidence(cfg, standalone, nil)
	ev.Observed = append(ev.Observed,
		fmt.Sprintf("reference: the operator cut %d connection(s) open at full-B before the backfill (%s); the C-gate observed %d old-keyspace leases at %v; %s", len(ref.cut), strings.Join(ref.cut, ", "), ref.gateOld, ref.gateAt.Round(time.Millisecond), lateSummary(ref)),
		fmt.Sprintf("runbook as written: the C-gate observed %d old-keyspace leases at %v; %s", bad.gateOld, bad.gateAt.Round(time.Millisecond), lateSummary(bad)))
	for _, o := range ev.Observed[len(ev.Observed)-2:] {
		fmt.Fprintln(GinkgoWriter, "fencing-migration/late-segment: "+o)
	}
	ctl := harness.Variant("no-cut", "the spec's runbook as written: backfill and C-gate with the A pod's connection still open; its delayed acquires land after the gate, on the old key", judge(bad))
	// The variant is the scenario only if the C-gate passed before the
	// delayed acquires landed.
	landed := firstLateReturn(bad.history)
	ctl = harness.Premise(ctl, bad.gateOld == 0 && landed > bad.gateAt,
		fmt.Sprintf("the delayed acquires did not land after the C-gate's observation (gate at %v observed %d old leases; first late reply at %v)", bad.gateAt, bad.gateOld, landed))
	// The reference proves the cut only if the cut met the A pod's
	// connection (its delayed acquires in flight on it).
	res := judge(ref, check.HappenedCheck.Judge(check.HappenedInput{Name: "late-segment-cut", Count: lateCutA(ref.cut), None: "the operator's cut did not close the A pod's connection (relay-a-late): its delayed acquires were not in flight on a cut connection"}))
	return harness.Check(row, report.ColumnSilentlyWrong, "", res, ev, ctl)
}

func lateSummary(r lateRun) string {
	var ok, refused, unknown int
	for _, op := range r.history {
		if op.Pod != "a-late" {
			continue
		}
		switch {
		case op.Unknown:
			unknown++
		case op.OK:
			ok++
		default:
			refused++
		}
	}
	forks := 0
	if len(r.samples) > 0 {
		forks = len(r.samples[len(r.samples)-1].Forks)
	}
	return fmt.Sprintf("the A pod's %d delayed acquires: %d granted, %d refused, %d unanswered (connection closed); %d sessions with a lease on both keyspaces at the end", ok+refused+unknown, ok, refused, unknown, forks)
}

// lateCutA counts the A pod's connection among the cut ones.
func lateCutA(cut []string) int {
	n := 0
	for _, name := range cut {
		if name == lateAPod {
			n++
		}
	}
	return n
}

func firstLateReturn(h []history.MigrationOp) time.Duration {
	first := time.Duration(-1)
	for _, op := range h {
		if op.Pod == "a-late" && !op.Unknown && (first < 0 || op.Return < first) {
			first = op.Return
		}
	}
	return first
}

// lateSchedule runs the schedule once: an A pod connected through the
// proxy, the rollout to B (B acquires and releases every session: the new
// counter leads, the old keyspace is empty), the A pod's acquires sent
// into the delay, the operator's steps (the cut when cut, the backfill,
// the C-gate's observation), then C acquires and an atomic read of both
// keyspaces.
func lateSchedule(ctx context.Context, b client.Backend, cut bool) lateRun {
	GinkgoHelper()
	Expect(standalone.Reset(ctx)).To(Succeed())
	node := standalone.Nodes()[0]
	DeferCleanup(node.RemoveToxics, context.Background())
	clock := traffic.NewClock()
	var run lateRun
	sessions := make([]fencing.Session, lateSessions)
	for i := range sessions {
		sessions[i] = fencing.Session{Community: "late", ID: fmt.Sprintf("s%d", i)}
	}
	pool := func(name string) client.Pool {
		p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{node.DirectAddr()}, ClientName: name})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Close)
		return p
	}
	operator := pool("slotgate-operator")
	aScripts := fencing.Embedded().Phase(fencing.A)
	aDir := fencing.New(operator, fencing.Options{Scripts: aScripts, LeaseTTL: lateTTL})
	_, err := operator.Do(ctx, client.Cmd{Prefix: []string{"SCRIPT", "LOAD", aScripts.Acquire.Source}})
	Expect(err).NotTo(HaveOccurred())

	By("an A pod connected through the proxy (a raw connection: it never reconnects or retries)")
	a, err := dialRESP(ctx, node.Addr(), lateAPod)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(a.close)

	By("the rollout to B: every session acquired and released on the new keyspace")
	bDir := fencing.New(pool("relay-b-0"), fencing.Options{Scripts: fencing.Embedded().Phase(fencing.B), LeaseTTL: lateTTL})
	for _, s := range sessions {
		var got fencing.Acquired
		op := lateCall(clock, "b-0", fencing.B, history.OpAcquire, s, func(op *history.MigrationOp) error {
			var err error
			got, err = bDir.Acquire(ctx, s, "b-0")
			op.OK, op.Gen = got.OK, got.Generation
			return err
		})
		run.history = append(run.history, op)
		Expect(op.OK).To(BeTrue(), "B acquire of %s", s)
		run.history = append(run.history, lateCall(clock, "b-0", fencing.B, history.OpRelease, s, func(op *history.MigrationOp) error {
			ok, err := bDir.Release(ctx, s, "b-0", got.Generation)
			op.OK, op.Gen = ok, got.Generation
			return err
		}))
	}

	// Full-B: the operator marks the connections open now.
	watermark, err := fencing.ConnectionWatermark(ctx, operator)
	Expect(err).NotTo(HaveOccurred())

	By(fmt.Sprintf("the A pod's acquires sent into %v of upstream latency", lateDelay))
	Expect(node.AddToxic(ctx, "late-segment", "latency", "upstream", 1, map[string]any{"latency": lateDelay.Milliseconds()})).To(Succeed())
	sent, due := clock.Now(), time.Now().Add(lateDelay+lateMargin)
	for _, s := range sessions {
		args := append([]string{"EVALSHA", aScripts.Acquire.SHA1, strconv.Itoa(len(aDir.KeyList(s)))}, aDir.KeyList(s)...)
		Expect(a.send(append(args, "a-late", strconv.FormatInt(lateTTL.Milliseconds(), 10)))).To(Succeed())
	}
	replies := make(chan []history.MigrationOp, 1)
	go func() {
		var ops []history.MigrationOp
		for _, s := range sessions {
			op := history.MigrationOp{Pod: "a-late", Phase: string(fencing.A)}
			op.Session, op.Kind, op.Owner, op.Call = s.String(), history.OpAcquire, "a-late", sent
			reply, err := a.read()
			op.Return = clock.Now()
			if err != nil {
				op.Unknown, op.ErrKind, op.Err = true, traffic.ErrKind(err), err.Error()
			} else if vals, ok := reply.([]any); ok && len(vals) >= 2 {
				won, _ := vals[0].(int64)
				gen, _ := vals[1].(int64)
				op.OK, op.Gen = won == 1, gen
				if !op.OK {
					op.HolderGen = gen
				}
			} else {
				op.Unknown, op.Err = true, fmt.Sprintf("unexpected reply %v", reply)
			}
			ops = append(ops, op)
		}
		replies <- ops
	}()

	By("the operator: cut the retired images' connections (reference only), backfill, observe the old keyspace")
	if cut {
		run.cut, err = fencing.CutRetiredConnections(ctx, operator, "relay-", watermark)
		Expect(err).NotTo(HaveOccurred())
	}
	_, err = fencing.Backfill(ctx, operator, sessions)
	Expect(err).NotTo(HaveOccurred())
	run.gateOld, err = fencing.CountLeases(ctx, operator, fencing.KeyspaceOld)
	Expect(err).NotTo(HaveOccurred())
	run.gateAt = clock.Now()

	var late []history.MigrationOp
	Eventually(ctx, replies).WithTimeout(lateDelay+10*time.Second).Should(Receive(&late), "the A pod's replies or its closed connection")
	run.history = append(run.history, late...)
	// Whatever the A pod's connection answered, its segments are judged
	// only once they were due: the reads below see what they did.
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(due)):
	}
	Expect(node.RemoveToxics(ctx)).To(Succeed())

	By("C pods acquire every session on the new keyspace; both keyspaces read at once")
	cDir := fencing.New(pool("relay-c-0"), fencing.Options{Scripts: fencing.Embedded().Phase(fencing.C), LeaseTTL: lateTTL})
	for _, s := range sessions {
		run.history = append(run.history, lateCall(clock, "c-0", fencing.C, history.OpAcquire, s, func(op *history.MigrationOp) error {
			got, err := cDir.Acquire(ctx, s, "c-0")
			op.OK, op.Gen = got.OK, got.Generation
			return err
		}))
	}
	obs := traffic.StartObserver(ctx, operator, nil, clock, sessions, time.Hour)
	_, err = obs.Sample(ctx)
	Expect(err).NotTo(HaveOccurred())
	run.samples, _ = obs.Stop()
	return run
}

// lateCall runs one directory call and records it.
func lateCall(clock *traffic.Clock, pod string, phase fencing.Phase, kind history.FencingOpKind, s fencing.Session, do func(op *history.MigrationOp) error) history.MigrationOp {
	op := history.MigrationOp{Pod: pod, Phase: string(phase)}
	op.Session, op.Kind, op.Owner = s.String(), kind, pod
	op.Call = clock.Now()
	err := do(&op)
	op.Return = clock.Now()
	if err != nil {
		op.OK, op.Unknown, op.ErrKind, op.Err = false, true, traffic.ErrKind(err), err.Error()
	}
	return op
}

// respConn is one raw RESP2 connection: what a process has on the wire,
// with no client library to reconnect or retry for it.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRESP(ctx context.Context, addr, name string) (*respConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	rc := &respConn{c: c, r: bufio.NewReader(c)}
	if err := rc.send([]string{"CLIENT", "SETNAME", name}); err != nil {
		rc.close()
		return nil, err
	}
	if _, err := rc.read(); err != nil {
		rc.close()
		return nil, fmt.Errorf("client setname: %w", err)
	}
	return rc, nil
}

func (rc *respConn) close() { _ = rc.c.Close() }

func (rc *respConn) send(args []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := io.WriteString(rc.c, b.String())
	return err
}

// read reads one reply: int64, string, []any, nil, or an error for an
// error reply or a closed connection.
func (rc *respConn) read() (any, error) {
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("read reply: empty line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, client.ParseServerError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rc.r, buf); err != nil {
			return nil, fmt.Errorf("read bulk: %w", err)
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = rc.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("read reply: unknown type %q", line[0])
}
