package telemetry_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/impl/telemetry"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/telemetry/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

const row = report.RowTelemetry

var _ = Describe("telemetry", func() {
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "telemetry/agreement/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "per-node, per-slot and per-channel client metrics agree with INFO commandstats, CLUSTER COUNTKEYSINSLOT, SPUBLISH receivers and SHARDNUMSUB drops (000 §Conformance, Telemetry)",
				Run:  func(ctx SpecContext) report.Check { return agreement(ctx, b) },
			},
			harness.Scenario{
				Name: "telemetry/hot-slot/" + string(b), Row: row, Column: report.ColumnSilentlyWrong,
				Spec: "a workload skewed onto one slot is attributed to that slot and its node, and the node's commandstats agree (000 §Conformance, Telemetry: aggregate CPU cannot attribute a hot slot)",
				Run:  func(ctx SpecContext) report.Check { return hotSlot(ctx, b) },
			},
			harness.Scenario{
				Name: "telemetry/scrape/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "the pod's metrics scrape without error over HTTP, with every family per shard/slot/channel and the phase gauge feeding the Deployment Gate (000 §Conformance, Telemetry; §Deployment Gate)",
				Run:  func(ctx SpecContext) report.Check { return scraped(ctx, b) },
			},
			harness.Scenario{
				Name: "telemetry/redirects/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "every MOVED/ASK/TRYAGAIN reaching the call path is counted per node and slot, never more than the server sent (000 §Conformance, Routing and Telemetry)",
				Run:  func(ctx SpecContext) report.Check { return redirects(ctx, b) },
			},
		)
	}
})

// telemetryScale sizes the row.
type telemetryScale struct {
	HotKeys, ColdKeys, BadKeys, Channels int
	Ops, Workers                         int
	// HotShare is the share of operations the skew puts on the hot slot.
	HotShare float64
	// Moves and Hold size the redirect scenario's slot migrations;
	// PinnedOps its commands through a client that follows no redirect.
	Moves, PinnedOps int
	Hold             time.Duration
}

func scaleOf() telemetryScale {
	if cfg.Profile == harness.ProfileFull {
		return telemetryScale{HotKeys: 32, ColdKeys: 1000, BadKeys: 8, Channels: 3, Ops: 40_000, Workers: 8, HotShare: 0.4, Moves: 12, PinnedOps: 400, Hold: 200 * time.Millisecond}
	}
	// NOTE: 3,000 operations, 40 % on 16 keys of one hash tag: the hot slot
	// holds ~7 % of the keys but ~40 % of the load, and each hot key alone
	// gets 2.5 %, so an instrument that hashes whole keys names a slot far
	// below the real one.
	return telemetryScale{HotKeys: 16, ColdKeys: 240, BadKeys: 4, Channels: 3, Ops: 3000, Workers: 4, HotShare: 0.4, Moves: 4, PinnedOps: 60, Hold: 100 * time.Millisecond}
}

// minHotShare is the least share the checker accepts on the hot slot: the
// skew's share less sampling noise.
func (s telemetryScale) minHotShare() float64 { return s.HotShare * 0.75 }

// workloadCommands are the commands the skewed workload sends; only these
// are compared with commandstats (the client libraries send their own
// HELLO, CLUSTER SLOTS, PING, ...).
var workloadCommands = []string{"get", "set", "incr", "spublish"}

// skewRun is one backend's skewed workload, observed by the correct
// instrument and by known-bad ones over the very same commands (each wraps
// the one below it), with the servers' counters around it.
type skewRun struct {
	hot      int
	hotOwner string
	keys     []string
	// Instruments: correct, whole-key slot attribution, and a correct one
	// on the subscriber only whose scrape, without the gap family, is the
	// gap-dropping instrument's (instruments_test.go).
	good, whole, dropGaps *telemetry.Metrics
	// Scrapes after the fill phase (each key SET once) and after the run.
	goodFill, wholeFill []history.TelemetrySample
	goodRun, wholeRun   []history.TelemetrySample
	// Subscription metrics after the gap phase.
	goodSub, dropSub []history.TelemetrySample
	// Server side: stats before and after the run, key counts per slot,
	// receivers per channel, subscriptions the server ended per channel.
	before, after map[string]serverStats
	slotKeys      map[int]float64
	delivered     map[string]float64
	unpublished   map[string]float64 // SPUBLISH without a reply
	drops         map[string]float64
	failed        map[string]int // workload errors by kind (bad INCRs excepted)
	ops           int
	elapsed       time.Duration
}

// skews runs each backend's skewed workload once (skewOf); the agreement,
// hot-slot and scrape scenarios judge the same run.
var skews = harness.NewOnce(skewOf)

// tagIn finds a hash tag with the prefix whose slot is s.
func tagIn(prefix string, s int) string {
	for i := 0; ; i++ {
		tag := fmt.Sprintf("%s-%d", prefix, i)
		if slot.Of("{"+tag+"}") == s {
			return tag
		}
	}
}

// skewOf runs b's skewed workload (through skews, once).
func skewOf(ctx SpecContext, b client.Backend) *skewRun {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand("telemetry/skew/" + string(b))
	run := &skewRun{hot: rng.IntN(slot.Count), slotKeys: map[int]float64{}, delivered: map[string]float64{}, unpublished: map[string]float64{}, drops: map[string]float64{}, failed: map[string]int{}}
	owners := serverOwners(ctx, cluster)
	run.hotOwner = owners[run.hot]
	id := fmt.Sprintf("%x", rng.Uint32())
	hotTag := tagIn("hot"+id, run.hot)
	var hot, cold, bad []string
	for i := range s.HotKeys {
		hot = append(hot, fmt.Sprintf("tm:{%s}:h%d", hotTag, i))
	}
	for i := range s.ColdKeys {
		cold = append(cold, fmt.Sprintf("tm:%s:c%d", id, i))
	}
	for i := range s.BadKeys {
		bad = append(bad, fmt.Sprintf("tm:%s:bad%d", id, i))
	}
	run.keys = append(append(append([]string{}, hot...), cold...), bad...)
	// One sharded channel per shard, so every shard carries pub/sub.
	var channels []string
	byOwner := map[string]bool{}
	for i := 0; len(channels) < s.Channels; i++ {
		ch := fmt.Sprintf("tm:ch:%s:%d", id, i)
		if o := owners[slot.Of(ch)]; !byOwner[o] || len(byOwner) == len(cluster.Primaries()) {
			byOwner[o] = true
			channels = append(channels, ch)
		}
	}

	By("instruments: the correct one, a whole-key-slot mutant, and the subscriber-only pod the gap-dropping instrument is read from, over the same traffic")
	phase := fencing.NewPodMetrics("telemetry-" + string(b))
	phase.SetPhase(fencing.C)
	run.good = telemetry.New(telemetry.Options{Pod: "telemetry-" + string(b), Phase: phase})
	// Built without the phase gauge: the scrape scenario's control.
	run.whole = telemetry.New(telemetry.Options{Pod: "telemetry-" + string(b), Mutant: telemetry.MutantWholeKeySlot})
	// The subscriber-only pod (read without its gap family, it is the
	// gap-dropping instrument) exports a stale phase gauge: it booted on B
	// and runs the C scripts, but never moved its gauge (the scrape
	// scenario's second control: the gate would read B).
	stale := fencing.NewPodMetrics("telemetry-" + string(b))
	stale.SetPhase(fencing.B)
	run.dropGaps = telemetry.New(telemetry.Options{Pod: "telemetry-" + string(b), Phase: stale})
	raw := harness.Pool(ctx, b, cluster)
	inner, err := telemetry.WrapPool(ctx, raw, run.good, telemetry.PoolOptions{})
	Expect(err).NotTo(HaveOccurred())
	pool, err := telemetry.WrapPool(ctx, inner, run.whole, telemetry.PoolOptions{})
	Expect(err).NotTo(HaveOccurred())

	sub, err := client.NewSubscriber(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: cluster.Addrs(), ClientName: "slotgate-telemetry-sub"})
	Expect(err).NotTo(HaveOccurred())
	// The whole-key instrument sees the subscription too, so the scrape
	// control differs from the correct instrument by the phase gauge only.
	subs := telemetry.WrapSubscriber(telemetry.WrapSubscriber(telemetry.WrapSubscriber(sub, run.good), run.whole), run.dropGaps)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for range subs.Messages() {
		}
	}()
	DeferCleanup(func() {
		_ = subs.Close()
		<-consumed
	})
	for _, ch := range channels {
		Expect(subs.SSubscribe(ctx, ch)).To(Succeed())
	}

	run.before = statsOf(ctx, cluster)
	began := time.Now()
	By(fmt.Sprintf("fill: SET each of %d keys once (%d under the hot tag of slot %d)", len(run.keys), len(hot), run.hot))
	for _, k := range run.keys {
		v := "0"
		if strings.Contains(k, ":bad") {
			v = "not-a-number"
		}
		_, err := pool.Do(ctx, client.NewCmd("SET", []string{k}, v))
		Expect(err).NotTo(HaveOccurred())
	}
	run.goodFill, run.wholeFill = mustScrape(ctx, run.good), mustScrape(ctx, run.whole)
	for _, smp := range append(append([]history.TelemetrySample{}, run.goodFill...), run.wholeFill...) {
		if smp.Name == telemetry.CommandsName && smp.Labels["command"] == "set" {
			n, _ := strconv.Atoi(smp.Labels["slot"])
			run.slotKeys[n] = 0
		}
	}
	for _, k := range run.keys {
		run.slotKeys[slot.Of(k)] = 0
	}
	for sl := range run.slotKeys {
		n, err := cluster.NodeForSlot(ctx, sl)
		Expect(err).NotTo(HaveOccurred())
		v, err := n.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", sl)
		Expect(err).NotTo(HaveOccurred())
		run.slotKeys[sl] = float64(v.(int64))
	}

	By(fmt.Sprintf("skew: %d operations by %d workers, %.0f%% on the hot slot, INCR on non-numbers and SPUBLISH on %d channels among them", s.Ops, s.Workers, 100*s.HotShare, len(channels)))
	// Each command goes into the history of the scenario running the
	// skew, for its timeline (the deliberate INCRs on non-numbers show as
	// failed).
	clock := traffic.ClockOf(ctx)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range s.Workers {
		wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
		wg.Go(func() {
			defer GinkgoRecover()
			for range s.Ops / s.Workers {
				key := cold[wrng.IntN(len(cold))]
				if wrng.Float64() < s.HotShare {
					key = hot[wrng.IntN(len(hot))]
				}
				var cmd client.Cmd
				switch p := wrng.Float64(); {
				case p < 0.02:
					cmd = client.NewCmd("INCR", []string{bad[wrng.IntN(len(bad))]})
				case p < 0.07:
					ch := channels[wrng.IntN(len(channels))]
					octx, cancel := context.WithTimeout(ctx, 2*time.Second)
					start := clock.Now()
					reply, err := pool.Do(octx, client.NewCmd("SPUBLISH", []string{ch}, "m"))
					cancel()
					harness.Call(ctx, string(b), "spublish", start, err)
					n, perr := client.AsInt64(reply)
					mu.Lock()
					if err != nil || perr != nil {
						run.unpublished[ch]++
						run.failed[traffic.ErrKind(err)]++
					} else {
						run.delivered[ch] += float64(n)
					}
					run.ops++
					mu.Unlock()
					continue
				case p < 0.45:
					cmd = client.NewCmd("GET", []string{key})
				case p < 0.75:
					cmd = client.NewCmd("SET", []string{key}, "1")
				default:
					cmd = client.NewCmd("INCR", []string{key})
				}
				octx, cancel := context.WithTimeout(ctx, 2*time.Second)
				start := clock.Now()
				_, err := pool.Do(octx, cmd)
				cancel()
				harness.Call(ctx, string(b), strings.ToLower(cmd.Prefix[0]), start, err)
				mu.Lock()
				// A failure is no verdict here: the instrument counts it
				// (an unknown outcome widens the tolerance by one).
				if err != nil && (cmd.Prefix[0] != "INCR" || !strings.Contains(cmd.Keys[0], ":bad")) {
					run.failed[traffic.ErrKind(err)]++
				}
				run.ops++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	run.elapsed = time.Since(began)
	By("waiting until the subscriber has counted every delivery the server reported")
	Eventually(func() error {
		counted := judge.By(mustScrape(ctx, run.good), telemetry.MessagesName, "channel", nil)
		for ch, n := range run.delivered {
			if counted[ch] < n {
				return fmt.Errorf("channel %s: %v of %v deliveries counted", ch, counted[ch], n)
			}
		}
		return nil
	}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(Succeed())
	run.goodRun, run.wholeRun = mustScrape(ctx, run.good), mustScrape(ctx, run.whole)
	run.after = statsOf(ctx, cluster)

	moved := channels[0]
	By(fmt.Sprintf("gap: migrate the slot of channel %s; the server ends its subscription (SHARDNUMSUB 1 → 0)", moved))
	numsub := func() map[string]float64 {
		out := map[string]float64{}
		for _, n := range cluster.Primaries() {
			for _, ch := range channels {
				v, err := n.Do(ctx, "PUBSUB", "SHARDNUMSUB", ch)
				Expect(err).NotTo(HaveOccurred())
				arr := v.([]any)
				out[ch] += float64(arr[1].(int64))
			}
		}
		return out
	}
	subsBefore := numsub()
	_, err = fault.Apply(ctx, cluster, fault.MoveSlot{Slot: slot.Of(moved), To: -1})
	harness.MustConfirm(err, cfg.Seed)
	Eventually(func() float64 {
		return judge.Sum(mustScrape(ctx, run.good), telemetry.GapsName, map[string]string{"channel": moved})
	}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", 1))
	subsAfter := numsub()
	for _, ch := range channels {
		run.drops[ch] = max(0, subsBefore[ch]-subsAfter[ch])
	}
	run.goodSub, run.dropSub = mustScrape(ctx, run.good), withoutFamily(mustScrape(ctx, run.dropGaps), telemetry.GapsName)
	return run
}

// nodeCounts builds the per-node comparison of one instrument's scrape with
// the servers' commandstats deltas.
func nodeCounts(samples []history.TelemetrySample, before, after map[string]serverStats) []judge.NodeCount {
	nodes := map[string]bool{}
	for addr := range after {
		nodes[addr] = true
	}
	for _, smp := range samples {
		if n, ok := smp.Labels["node"]; ok {
			nodes[n] = true
		}
	}
	var out []judge.NodeCount
	for node := range nodes {
		for _, cmd := range workloadCommands {
			m := map[string]string{"node": node, "command": cmd}
			c := judge.NodeCount{Node: node, Command: cmd,
				Sent:       judge.Sum(samples, telemetry.CommandsName, m),
				Redirected: judge.Sum(samples, telemetry.RedirectsName, m),
			}
			for kind, n := range judge.By(samples, telemetry.ErrorsName, "kind", m) {
				switch {
				case kind == telemetry.KindNetwork:
					c.Unknown += n
				case strings.HasPrefix(kind, "refused-"):
					c.Refused += n
				default:
					c.ServerErrors += n
				}
			}
			d := after[node].Commands[cmd].minus(before[node].Commands[cmd])
			c.Calls, c.Rejected, c.Failed = d.Calls, d.Rejected, d.Failed
			if c.Sent == 0 && c.Calls == 0 && c.Rejected == 0 {
				continue
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node+out[i].Command < out[j].Node+out[j].Command })
	return out
}

// slotCounts compares the fresh SETs an instrument counted per slot with
// CLUSTER COUNTKEYSINSLOT.
func slotCounts(fill []history.TelemetrySample, serverKeys map[int]float64) []judge.SlotKeys {
	sets := judge.By(fill, telemetry.CommandsName, "slot", map[string]string{"command": "set"})
	unknown := judge.By(fill, telemetry.ErrorsName, "slot", map[string]string{"command": "set", "kind": telemetry.KindNetwork})
	var out []judge.SlotKeys
	for sl, keys := range serverKeys {
		label := strconv.Itoa(sl)
		out = append(out, judge.SlotKeys{Slot: sl, ClientSets: sets[label], Unknown: unknown[label], ServerKeys: keys})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}

// channelCounts compares an instrument's subscription metrics with what the
// server reported.
func channelCounts(samples []history.TelemetrySample, delivered, unpublished, drops map[string]float64) []judge.Channel {
	var out []judge.Channel
	for ch := range drops {
		m := map[string]string{"channel": ch}
		out = append(out, judge.Channel{Channel: ch,
			ClientMessages: judge.Sum(samples, telemetry.MessagesName, m), Delivered: delivered[ch], Unknown: unpublished[ch],
			ClientGaps: judge.Sum(samples, telemetry.GapsName, m), ServerDrops: drops[ch]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Channel < out[j].Channel })
	return out
}

func agreementOf(r *skewRun, run, fill, sub []history.TelemetrySample) check.Result {
	return judge.Agrees.Judge(judge.Agreement{
		Nodes:    nodeCounts(run, r.before, r.after),
		Slots:    slotCounts(fill, r.slotKeys),
		Channels: channelCounts(sub, r.delivered, r.unpublished, r.drops),
		MinOps:   float64(scaleOf().Ops) / 2,
	})
}

func evidenceOf(ctx SpecContext, b client.Backend, r *skewRun) report.Evidence {
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Client = versions.Get(ctx, b)
	ev.Metrics = map[string]float64{"operations": float64(r.ops), "keys": float64(len(r.keys)), "hot_slot": float64(r.hot), "slots_compared": float64(len(r.slotKeys)), "run_ms": float64(r.elapsed.Milliseconds())}
	return ev
}

// versions names each backend's client library and version for the
// evidence, from one pool per process.
var versions = harness.NewOnce(func(ctx SpecContext, b client.Backend) string {
	GinkgoHelper()
	return harness.Pool(ctx, b, cluster).Version()
})

func agreement(ctx SpecContext, b client.Backend) report.Check {
	r := skews.Get(ctx, b)
	ev := evidenceOf(ctx, b, r)
	result := agreementOf(r, r.goodRun, r.goodFill, r.goodSub)
	ev.Metrics["gaps_counted"] = judge.Sum(r.goodSub, telemetry.GapsName, nil)
	ev.Metrics["deliveries_counted"] = judge.Sum(r.goodSub, telemetry.MessagesName, nil)
	ev.Metrics["errors_counted"] = judge.Sum(r.goodRun, telemetry.ErrorsName, nil)
	if len(r.failed) > 0 {
		ev.Observed = append(ev.Observed, fmt.Sprintf("workload commands that failed (besides the deliberate INCRs on non-numbers), by kind: %v", r.failed))
	}
	By("negative controls: the whole-key-slot and gap-dropping instruments over the same traffic")
	whole := agreementOf(r, r.wholeRun, r.wholeFill, r.goodSub)
	drop := agreementOf(r, r.goodRun, r.goodFill, r.dropSub)
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(telemetry.MutantWholeKeySlot), "an instrument that hashes the whole key, ignoring the hash tag: commands attributed to slots and nodes that never served them", whole),
		harness.Variant(dropGaps, "an instrument that ignores the server's sunsubscribe and the client's resubscriptions: a subscription gap with messages lost is never counted", drop))
}

// hotOf builds the hot-slot comparison from one instrument's skew-phase
// counts (run − fill).
func hotOf(r *skewRun, run, fill []history.TelemetrySample) judge.Hot {
	h := judge.Hot{Skewed: r.hot, ServerOwner: r.hotOwner, ClientBySlot: map[int]float64{}, ClientNode: map[int]string{}, ServerCalls: map[string]float64{}, MinShare: scaleOf().minHotShare()}
	before := map[string]float64{}
	for _, smp := range fill {
		if smp.Name == telemetry.CommandsName {
			before[smp.Labels["slot"]+"@"+smp.Labels["node"]] += smp.Value
		}
	}
	perNode := map[int]map[string]float64{}
	for _, smp := range run {
		if smp.Name != telemetry.CommandsName {
			continue
		}
		sl, _ := strconv.Atoi(smp.Labels["slot"])
		n := smp.Value - before[smp.Labels["slot"]+"@"+smp.Labels["node"]]
		h.ClientBySlot[sl] += n
		if perNode[sl] == nil {
			perNode[sl] = map[string]float64{}
		}
		perNode[sl][smp.Labels["node"]] += smp.Value
	}
	for sl, nodes := range perNode {
		best := -1.0
		for node, n := range nodes {
			if n > best {
				h.ClientNode[sl], best = node, n
			}
		}
	}
	for node, st := range r.after {
		for _, cmd := range workloadCommands {
			d := st.Commands[cmd].minus(r.before[node].Commands[cmd])
			h.ServerCalls[node] += d.Calls + d.Rejected
		}
	}
	return h
}

func hotSlot(ctx SpecContext, b client.Backend) report.Check {
	r := skews.Get(ctx, b)
	ev := evidenceOf(ctx, b, r)
	h := hotOf(r, r.goodRun, r.goodFill)
	result := judge.HotSlot.Judge(h)
	var total float64
	for _, n := range h.ClientBySlot {
		total += n
	}
	ev.Metrics["hot_slot_commands"] = h.ClientBySlot[r.hot]
	ev.Metrics["hot_slot_share_pct"] = 100 * h.ClientBySlot[r.hot] / max(total, 1)
	ev.Metrics["hot_node_server_commands"] = h.ServerCalls[r.hotOwner]
	for node, n := range h.ServerCalls {
		ev.Observed = append(ev.Observed, fmt.Sprintf("commandstats delta of %s: %.0f workload commands", node, n))
	}
	sort.Strings(ev.Observed)
	By("negative control: the whole-key-slot instrument over the same traffic")
	whole := judge.HotSlot.Judge(hotOf(r, r.wholeRun, r.wholeFill))
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant(string(telemetry.MutantWholeKeySlot), "an instrument that hashes the whole key, ignoring the hash tag: the hot tag's keys spread over many slots and the hot slot vanishes", whole))
}

// requiredFamilies is what a pod must export (spec 000 §Conformance,
// Telemetry): per node and slot, per channel, and the phase gauge.
var requiredFamilies = []string{telemetry.CommandsName, telemetry.ErrorsName, telemetry.SlotMapRefreshesName, telemetry.MessagesName, telemetry.GapsName, fencing.PhaseGaugeName}

func scraped(ctx SpecContext, b client.Backend) report.Check {
	r := skews.Get(ctx, b)
	ev := evidenceOf(ctx, b, r)
	s := scrape(ctx, r.good)
	result, _, phase := exposedAtC(s)
	families := map[string]bool{}
	for _, smp := range s.Samples {
		families[smp.Name] = true
	}
	ev.Metrics["samples"] = float64(len(s.Samples))
	ev.Metrics["families"] = float64(len(families))
	ev.Metrics["phase_gauge"] = phase
	By("negative control: an instrument registered without the phase gauge")
	noPhase, _, _ := exposedAtC(scrape(ctx, r.whole))
	// Judged by the phase half alone: the subscriber-only pod wraps only
	// the subscriber, so its command families are missing anyway.
	_, stalePhase, _ := exposedAtC(scrape(ctx, r.dropGaps))
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("no-phase-gauge", "a pod (the whole-key instrument, run over the same traffic) whose registry lacks buzz_fencing_phase: the Deployment Gate reads nothing (spec 000 §Deployment Gate rule 2)", noPhase),
		harness.Variant("stale-phase-gauge", "a pod (the subscriber-only instrument, run over the same traffic) that runs the C scripts but still exports the phase it booted on (B): the Deployment Gate reads the wrong phase", stalePhase))
}

// exposedAtC is the scrape check: every required family exported, and the
// phase gauge saying C, the phase the pods run. It returns the whole
// result, the phase half alone, and the gauge's value.
func exposedAtC(s history.TelemetryScrape) (all, atC check.Result, phase float64) {
	phase = judge.Sum(s.Samples, fencing.PhaseGaugeName, nil)
	atC = judge.PhaseC.Judge(s)
	return check.All("telemetry-exposed", judge.Exposed.Judge(judge.Exposure{Scrape: s, Required: requiredFamilies, Nodes: nodeAddrs(cluster)}), atC), atC, phase
}
