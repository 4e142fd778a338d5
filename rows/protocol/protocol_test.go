package protocol_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/presence"
	"github.com/slotgate/slotgate/report"
	presencejudge "github.com/slotgate/slotgate/rows/presence/judge"
	presenceworkload "github.com/slotgate/slotgate/rows/presence/workload"
	"github.com/slotgate/slotgate/rows/protocol/judge"
	"github.com/slotgate/slotgate/rows/protocol/workload"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const (
	row = report.RowProtocol
	// poolName names the pool under test; ctlName the negative control's
	// pool, which requests the other protocol.
	poolName = "slotgate-pool"
	ctlName  = "slotgate-pool-ctl"
)

var protocols = []client.Protocol{client.RESP2, client.RESP3}

var _ = Describe("protocol", func() {
	for _, b := range harness.BackendsFromEnv() {
		for _, p := range protocols {
			c := cell{backend: b, proto: p, name: fmt.Sprintf("protocol/%s/resp%d", b, p)}
			harness.Emit(
				// One scenario name per column: each keeps its own history
				// (histories are stored by scenario name), so `slotgate check
				// --from` finds both judgements.
				harness.Scenario{
					Name: c.name + "/" + string(report.ColumnSilentlyWrong), Row: row, Column: report.ColumnSilentlyWrong,
					Spec: fmt.Sprintf("under RESP%d the fencing C-phase stays linearizable (one authority, generation +1, guards) and bulk reads stay positional (000 §Conformance, Protocol choice; D3)", p),
					Run:  func(ctx SpecContext) report.Check { return silentlyWrong(cells.Get(ctx, c)) },
				},
				harness.Scenario{
					Name: c.name + "/" + string(report.ColumnErrors), Row: row, Column: report.ColumnErrors,
					Spec: fmt.Sprintf("every pool connection negotiated RESP%d, the workload ran without an error, and RESP%d reply shapes decode exactly (000 §Conformance, Protocol choice: admitted by test, never assumed)", p, p),
					Run:  func(ctx SpecContext) report.Check { return errorsColumn(cells.Get(ctx, c)) },
				},
			)
		}
	}
})

// protoScale sizes the row.
type protoScale struct {
	Sessions, Rounds, Contenders, MutantSessions int
	Keys, FullReads, SampleReads, SampleSize     int
	ShapeProbes                                  int
}

func scaleOf() protoScale {
	if cfg.Profile == harness.ProfileFull {
		return protoScale{Sessions: 120, Rounds: 6, Contenders: 6, MutantSessions: 24, Keys: 5_000, FullReads: 4, SampleReads: 100, SampleSize: 500, ShapeProbes: 200}
	}
	return protoScale{Sessions: 12, Rounds: 2, Contenders: 4, MutantSessions: 12, Keys: 500, FullReads: 2, SampleReads: 10, SampleSize: 100, ShapeProbes: 24}
}

// cell is one backend × protocol of the matrix. Both columns judge the same
// run (cells): whichever spec of the cell runs first drives the cluster and
// keeps the recorded histories; the checks are pure and read them.
type cell struct {
	backend client.Backend
	proto   client.Protocol
	name    string
}

func (c cell) String() string { return c.name } // names the run in Once's messages

var cells = harness.NewOnce(func(ctx SpecContext, c cell) *cellRun { return c.drive(ctx) })

type cellRun struct {
	scale   protoScale
	proto   int // the RESP version the pool under test requested
	ev      report.Evidence
	nodes   []string // the primaries: each must carry the pool
	fencing []history.FencingOp
	mutant  []history.FencingOp
	// outcomes are every loud result of the workload (fencing, presence
	// writes and reads, shape probes' commands are judged by ReplyShapes).
	outcomes    []history.OpOutcome
	want        map[string]presencejudge.Want
	reads       []presencejudge.Read
	concatReads []presencejudge.Read
	conns       []check.ClientConn  // CLIENT LIST of every node, pool under test alive
	ctlConns    []check.ClientConn  // CLIENT LIST with the other-protocol pool alive
	shapes      []workload.RawShape // typed reads through the pool under test
	ctlShapes   []workload.RawShape // typed reads through the other-protocol pool
}

func openPool(ctx context.Context, b client.Backend, p client.Protocol, name string) client.Pool {
	GinkgoHelper()
	pool, err := client.NewPool(ctx, harness.Secure(cluster, client.Options{Backend: b, Mode: client.ModeCluster, Protocol: p, Addrs: cluster.Addrs(), ClientName: name}))
	Expect(err).NotTo(HaveOccurred(), "open %s RESP%d pool on %s", b, p, cluster.Spec)
	DeferCleanup(pool.Close)
	return pool
}

// clientList reads CLIENT LIST on every node of the cluster.
func clientList(ctx context.Context) []check.ClientConn {
	GinkgoHelper()
	var out []check.ClientConn
	for _, n := range cluster.Nodes() {
		reply, err := n.Do(ctx, "CLIENT", "LIST")
		Expect(err).NotTo(HaveOccurred())
		text, err := client.AsString(reply)
		if err != nil {
			text = fmt.Sprint(reply)
		}
		out = append(out, check.ParseClientList(n.Name(), text)...)
	}
	return out
}

func other(p client.Protocol) client.Protocol {
	if p == client.RESP2 {
		return client.RESP3
	}
	return client.RESP2
}

func (c cell) drive(ctx context.Context) *cellRun {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand(c.name)
	r := &cellRun{scale: s, proto: int(c.proto)}
	for _, n := range cluster.Primaries() {
		r.nodes = append(r.nodes, n.Name())
	}
	pool := openPool(ctx, c.backend, c.proto, poolName)
	r.ev = harness.Evidence(cfg, cluster, pool)
	began := time.Now()

	By(fmt.Sprintf("RESP%d pool: racing %d pods for %d sessions × %d rounds", c.proto, s.Contenders, s.Sessions, s.Rounds))
	rec := &traffic.Recorder{}
	w := traffic.Contention{Sessions: harness.Sessions(rng, "proto", s.Sessions), Rounds: s.Rounds, Contenders: s.Contenders, Workers: 8}
	Expect(w.Run(ctx, fencing.New(pool, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C)}), traffic.ClockOf(ctx), rec)).To(Succeed())
	r.fencing = rec.FencingHistory()
	r.outcomes = append(r.outcomes, rec.Outcomes()...)

	By(fmt.Sprintf("RESP%d pool: %d presence keys, %d full reads and %d samples of %d", c.proto, s.Keys, s.FullReads, s.SampleReads, s.SampleSize))
	store := presence.New(pool, presence.Options{TTL: time.Minute})
	pat := presenceworkload.Write(ctx, store, rng, presenceworkload.Layout{Community: fmt.Sprintf("proto%d", c.proto), Keys: s.Keys, ShortTTL: 200 * time.Millisecond, Workers: 8})
	r.want = pat.Want
	r.outcomes = append(r.outcomes, pat.Outcomes...)
	clock := traffic.ClockOf(ctx)
	reader := &presenceworkload.Reader{Store: store, Clock: clock}
	concat := &presenceworkload.Reader{Store: presence.New(pool, presence.Options{Read: presence.ReadOptions{Mode: presence.ReadConcatenated}}), Clock: clock}
	for range s.FullReads {
		reader.Read(ctx, presenceworkload.Shuffled(rng, pat.Keys, s.Keys/20))
	}
	for range s.SampleReads {
		k := presenceworkload.Sample(rng, pat.Keys, s.SampleSize, nil)
		reader.Read(ctx, k)
		concat.Read(ctx, k)
	}
	r.reads, r.concatReads = reader.Reads(), concat.Reads()
	r.outcomes = append(r.outcomes, presencejudge.Outcomes(r.reads)...)

	By(fmt.Sprintf("RESP%d pool: %d ZSCORE + %d HGETALL typed reads", c.proto, s.ShapeProbes, s.ShapeProbes))
	r.shapes = workload.ShapeProbe(ctx, pool, rng, "proto:shape", s.ShapeProbes)

	By("CLIENT LIST on every node: what the pool's connections negotiated")
	r.conns = clientList(ctx)

	By("negative control: mutant " + string(fencing.MutantAcquireIgnoresLease) + " under the same protocol")
	scripts, err := fencing.WithMutant(fencing.MutantAcquireIgnoresLease)
	Expect(err).NotTo(HaveOccurred())
	mrec := &traffic.Recorder{}
	mw := traffic.Contention{Sessions: harness.Sessions(rng, "proto-mutant", s.MutantSessions), Rounds: 2, Contenders: s.Contenders, Workers: 8}
	Expect(mw.Run(ctx, fencing.New(pool, fencing.Options{Scripts: scripts}), traffic.ClockOf(ctx), mrec)).To(Succeed())
	r.mutant = mrec.FencingHistory()

	By(fmt.Sprintf("negative control: a pool requesting RESP%d, its CLIENT LIST and its reply shapes", other(c.proto)))
	ctl := openPool(ctx, c.backend, other(c.proto), ctlName)
	r.ctlShapes = workload.ShapeProbe(ctx, ctl, rng, "proto:ctl", s.ShapeProbes)
	r.ctlConns = clientList(ctx)

	r.ev.Metrics = map[string]float64{
		"protocol_requested": float64(c.proto), "fencing_operations": float64(len(r.fencing)), "sessions": float64(s.Sessions),
		"presence_keys": float64(len(pat.Keys)), "presence_reads": float64(len(r.reads)), "typed_reads": float64(len(r.shapes)),
		"pool_connections": float64(countNamed(r.conns, poolName)), "control_pool_connections": float64(countNamed(r.ctlConns, ctlName)),
		"drive_seconds": time.Since(began).Seconds(),
	}
	return r
}

func countNamed(conns []check.ClientConn, name string) int {
	n := 0
	for _, c := range conns {
		if c.Name == name {
			n++
		}
	}
	return n
}

// evidence copies the cell's evidence, so each column's report entry owns
// its slices.
func (r *cellRun) evidence() report.Evidence {
	ev := r.ev
	ev.Observed = append([]string(nil), r.ev.Observed...)
	ev.Metrics = map[string]float64{}
	for k, v := range r.ev.Metrics {
		ev.Metrics[k] = v
	}
	return ev
}

func silentlyWrong(r *cellRun) report.Check {
	result := check.All("protocol-silently-wrong",
		check.FencingInvariantsCheck.Judge(r.fencing),
		presencejudge.Positional.Judge(presencejudge.PositionalInput{Want: r.want, Reads: r.reads, MinPositions: r.scale.Keys}),
	)
	ev := r.evidence()
	if errs := check.NoErrors(r.outcomes, 1); errs.Status != check.Pass {
		ev.Observed = append(ev.Observed, "errors during the run (scored in the errors column): "+errs.Message)
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(fencing.MutantAcquireIgnoresLease), "acquire skips the held-lease check under the same protocol: two owners for one session (M1 class)", check.FencingInvariantsCheck.Judge(r.mutant)),
		harness.Variant(string(presence.ReadConcatenated), "a bulk read split per slot whose parts are appended in slot order: positions lost under the same protocol", presencejudge.Positional.Judge(presencejudge.PositionalInput{Want: r.want, Reads: r.concatReads, MinPositions: 1})),
	)
}

func errorsColumn(r *cellRun) report.Check {
	want := r.proto
	typed := workload.DecodeShapes(r.shapes, workload.ProtocolAware)
	result := check.All("protocol-errors",
		check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: r.outcomes, MinOps: r.scale.Sessions}),
		judge.NegotiatedProtocol.Judge(judge.NegotiatedInput{Conns: r.conns, Name: poolName, Want: want, Nodes: r.nodes}),
		judge.ReplyShapes.Judge(judge.ShapesInput{Reads: typed, Proto: want, MinReads: 2 * r.scale.ShapeProbes}),
	)
	ev := r.evidence()

	// Control 1: the other-protocol pool's CLIENT LIST judged against the
	// protocol this cell requires — a pool that asked for RESP2 while RESP3
	// is admitted (or the reverse) must be caught.
	ctlWant := int(other(client.Protocol(want)))
	ctlSelf := judge.NegotiatedProtocol.Judge(judge.NegotiatedInput{Conns: r.ctlConns, Name: ctlName, Want: ctlWant, Nodes: r.nodes})
	negotiated := harness.Variant(fmt.Sprintf("requests-resp%d-checked-as-resp%d", ctlWant, want),
		fmt.Sprintf("a pool that negotiated RESP%d is not admitted under RESP%d", ctlWant, want),
		judge.NegotiatedProtocol.Judge(judge.NegotiatedInput{Conns: r.ctlConns, Name: ctlName, Want: want, Nodes: r.nodes}))
	// Only a control whose pool really reached every node and really spoke
	// its own protocol proves the checker can tell them apart.
	negotiated = harness.Premise(negotiated, ctlSelf.Status == check.Pass, "the control pool did not reach every node speaking its own protocol")
	negotiated.Observed += " (the control pool judged against its own request: " + ctlSelf.Message + ")"

	// Control 2: a decoder that assumes RESP3 shapes, on real RESP2 replies,
	// must fail loudly (a decode error, never a silently wrong value).
	resp2 := r.shapes
	if want != 2 {
		resp2 = r.ctlShapes
	}
	aware := judge.ReplyShapes.Judge(judge.ShapesInput{Reads: workload.DecodeShapes(resp2, workload.ProtocolAware), Proto: 2, MinReads: 2 * r.scale.ShapeProbes})
	naiveReads := workload.DecodeShapes(resp2, workload.RESP3Only)
	naive := harness.Variant("resp3-only-decoder-on-resp2",
		"a decoder written for RESP3 (ZSCORE float64, HGETALL map) reading RESP2 replies (bulk string, flat array)",
		judge.ReplyShapesLoud.Judge(judge.ShapesInput{Reads: naiveReads, Proto: 2, MinReads: 2 * r.scale.ShapeProbes}))
	loud := judge.DecodeErrors(naiveReads)
	// The replies must be real RESP2 shapes (the aware decoder passes them):
	// the premise. Caught only for the right reason: loud decode errors
	// (judge.ReplyShapesLoud).
	naive = harness.Premise(naive, aware.Status == check.Pass, "the replies were not RESP2 shapes the protocol-aware decoder accepts")
	naive.Observed += fmt.Sprintf(" (%d of %d loud decode errors; the same RESP2 replies through the protocol-aware decoder: %s)", loud, len(naiveReads), aware.Message)

	ctlTyped := judge.ReplyShapes.Judge(judge.ShapesInput{Reads: workload.DecodeShapes(r.ctlShapes, workload.ProtocolAware), Proto: ctlWant, MinReads: 2 * r.scale.ShapeProbes})
	ev.Observed = append(ev.Observed, "control pool (RESP"+fmt.Sprint(ctlWant)+") reply shapes: "+ctlTyped.Message)
	admitProtocol(r, result)
	return harness.Check(row, report.ColumnErrors, "", result, ev, negotiated, naive)
}

// admitProtocol records the raw client's admission under this cell's
// protocol: the library's own protocol option negotiated it on every
// primary (CLIENT LIST) and the workload ran without an error. Reply shapes
// are decoded by impl/client's normaliser and stay part of the cell's check.
func admitProtocol(r *cellRun, cell check.Result) {
	GinkgoHelper()
	b, _, _ := strings.Cut(r.ev.Client, " ")
	raw := check.All("protocol-admission", judge.NegotiatedProtocol.Judge(judge.NegotiatedInput{Conns: r.conns, Name: poolName, Want: r.proto, Nodes: r.nodes}), check.NoErrors(r.outcomes, r.scale.Sessions))
	harness.Admit(harness.Admission{Backend: client.Backend(b), Requirement: report.RequirementProtocol, Client: r.ev.Client, Path: harness.LibraryPath(client.Backend(b), "ClusterOptions.Protocol, ClusterClient.Do", "ClientOption.AlwaysRESP2, Client.Do"), Raw: raw, Wrapped: cell,
		Wrapper:  "impl/client reply normalisation",
		Evidence: fmt.Sprintf("The command pool requested RESP%d through the library's own option, fencing and presence workload on every primary.", r.proto)})
}
