package marconiaudit_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi/audit"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/marconiaudit/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// The archiver's wake (spec 002 §4.1 Handoff, §4.2): an entry appended to
// an idle stream is read at once — the XADD wakes the archiver's blocking
// XREADGROUP — not at the archiver's next poll. A sparse load keeps the
// stream idle between appends, so each entry's append→read latency is the
// wake alone. The reference and an archiver that polls (no BLOCK; it
// sleeps its block time between empty reads) run side by side.

// wakeRate and wakeSignals: appends ~1/wakeRate apart, well over the
// archiver's block, so most arrive at an idle stream; wakeMinIdle of
// them are needed for the median.
const (
	wakeRate    = 8.0
	wakeSignals = 40
	wakeMinIdle = 20
)

var _ = Describe("marconi-stream", func() {
	b := harness.BackendsFromEnv()[0] // the archiver's wire behaviour is its own, not the client library's
	harness.Emit(harness.Scenario{
		Name: "marconi-stream/archiver-wakes/" + string(b), Row: report.RowMarconiStream, Column: report.ColumnSilentlyWrong,
		Spec: "an entry appended to an idle stream is read by the PG archiver at once — the XADD wakes its blocking XREADGROUP — not after its poll interval: append→read median under a quarter of the archiver's block (002 §4.1 Handoff, §4.2 BLOCK, Stage 4 \"near-immediate\")",
		Run:  func(ctx SpecContext) report.Check { return runArchiverWakes(ctx, b) },
	})
})

func runArchiverWakes(ctx context.Context, b client.Backend) report.Check {
	GinkgoHelper()
	began := time.Now()
	pool := harness.Pool(ctx, b, cluster)
	clock := traffic.NewClock()
	tag := streamTag(b)
	node := cluster.Primaries()[0]
	primary := audit.Targets{Primary: true}
	By(fmt.Sprintf("%d signals at %.0f/s into the reference archiver and one that polls every %v", wakeSignals, wakeRate, archiverBlock))
	refLog, pollLog := &wakeLog{}, &wakeLog{}
	ref := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "wake", Schema: "ms_wake_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-wake", node)},
		Targets: primary, WrapPool: refLog.wrap, Rate: wakeRate, Max: wakeSignals})
	polled := startPipeline(ctx, b, pool, clock, pipelineSpec{Name: "poll-only", Schema: "ms_poll_" + tag, Tenants: []string{tenantOn(ctx, "ms-"+tag+"-poll", node)},
		Targets: primary, Mutant: audit.MutantPollOnly, WrapPool: pollLog.wrap, Rate: wakeRate, Max: wakeSignals})
	all := []*pipeline{ref, polled}
	DeferCleanup(func() { stopAll(all...) })
	for _, p := range all {
		Expect(p.load.Wait()).To(Succeed())
	}
	waitDrained(ctx, pool, 4*claimMinIdle, 30*time.Second, all...)
	stopAll(all...)

	ev := harness.Evidence(cfg, cluster, pool)
	ev.Timings = map[string]report.Duration{"run": report.Duration(time.Since(began))}
	ev.Observed = append(ev.Observed, fmt.Sprintf(departureBlock, archiverBlock))
	res := judge.ArchiverWakes.Judge(judge.WakeRun{Reads: refLog.reads(), Poll: archiverBlock, MinIdle: wakeMinIdle})
	ctl := harness.Variant(string(audit.MutantPollOnly),
		"the archiver polls (XREADGROUP without BLOCK, its block time slept between empty reads): an append waits for the next poll",
		judge.ArchiverWakes.Judge(judge.WakeRun{Reads: pollLog.reads(), Poll: archiverBlock, MinIdle: wakeMinIdle}))
	return harness.Check(report.RowMarconiStream, report.ColumnSilentlyWrong, "", res, ev, ctl)
}

// wakeLog records, for every entry an XREADGROUP for new entries (">")
// returned, when the reply reached the archiver: at the client seam, below
// the archiver's own code.
type wakeLog struct {
	mu sync.Mutex
	rs []judge.WakeRead
}

func (l *wakeLog) wrap(p client.Pool) client.Pool { return &wakePool{Pool: p, log: l} }

func (l *wakeLog) reads() []judge.WakeRead {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]judge.WakeRead(nil), l.rs...)
}

type wakePool struct {
	client.Pool
	log *wakeLog
}

func (p *wakePool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	reply, err := p.Pool.Do(ctx, cmd)
	at := time.Now().UnixMicro()
	if err != nil || len(cmd.Prefix) == 0 || !strings.EqualFold(cmd.Prefix[0], "XREADGROUP") || len(cmd.Args) == 0 || cmd.Args[len(cmd.Args)-1] != ">" {
		return reply, err
	}
	ids := replyIDs(reply)
	p.log.mu.Lock()
	for _, id := range ids {
		ms, _, _ := strings.Cut(id, "-")
		n, perr := strconv.ParseInt(ms, 10, 64)
		if perr == nil {
			p.log.rs = append(p.log.rs, judge.WakeRead{ID: id, AppendedMs: n, ReadUs: at})
		}
	}
	p.log.mu.Unlock()
	return reply, err
}

// replyIDs are the entry IDs of an XREADGROUP reply (RESP2 [[stream,
// entries]…], RESP3 {stream: entries}).
func replyIDs(reply any) []string {
	var lists []any
	switch t := reply.(type) {
	case map[string]any:
		for _, entries := range t {
			lists = append(lists, entries)
		}
	case []any:
		for _, raw := range t {
			if pair, ok := raw.([]any); ok && len(pair) == 2 {
				lists = append(lists, pair[1])
			}
		}
	}
	var ids []string
	for _, l := range lists {
		entries, _ := l.([]any)
		for _, e := range entries {
			if pair, ok := e.([]any); ok && len(pair) >= 1 {
				if id, err := client.AsString(pair[0]); err == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}
