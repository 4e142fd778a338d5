package telemetry_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fault"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/routing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/impl/telemetry"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/telemetry/judge"
	"github.com/slotgate/slotgate/suites/harness"
	"github.com/slotgate/slotgate/traffic"
)

// redirectKinds are the replies the redirect counter counts; errorstats
// names them the same way.
var redirectKinds = []client.ErrorKind{client.KindMoved, client.KindAsk, client.KindTryAgain}

// redirectsSent is the redirects the servers sent between two stats reads,
// on the nodes named (all when none).
func redirectsSent(before, after map[string]serverStats, nodes ...string) float64 {
	if len(nodes) == 0 {
		for n := range after {
			nodes = append(nodes, n)
		}
	}
	var sum float64
	for _, n := range nodes {
		for _, k := range redirectKinds {
			sum += after[n].Errors[string(k)] - before[n].Errors[string(k)]
		}
	}
	return sum
}

// pinnedTallies drives commands through a single-node pool pinned to the
// first primary — a client that follows no redirect — on keys of slots
// other primaries own, so the server answers every one with MOVED and every
// MOVED reaches the seam. It returns the tallies of the correct instrument
// and of the drop-redirects one (its export, over the same commands).
func pinnedTallies(ctx context.Context, b client.Backend, name string) (good, drop []judge.RedirectTally, scraped history.TelemetryScrape, moved float64) {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand(name)
	owner := cluster.Primaries()[0]
	owners := serverOwners(ctx, cluster)
	var keys []string
	keySlot := map[string]int{}
	for len(keys) < 4 {
		sl := rng.IntN(slot.Count)
		if owners[sl] == owner.Addr() {
			continue
		}
		tag := tagIn(fmt.Sprintf("pin%x", rng.Uint32()), sl)
		for i := range 2 {
			k := fmt.Sprintf("tm:{%s}:%d", tag, i)
			keys, keySlot[k] = append(keys, k), sl
		}
	}
	single, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeSingle, Addrs: []string{owner.Addr()}, ClientName: "slotgate-telemetry-pinned"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(single.Close)
	gm := telemetry.New(telemetry.Options{Pod: "pinned"})
	gp, err := telemetry.WrapPool(ctx, single, gm, telemetry.PoolOptions{Node: owner.Addr()})
	Expect(err).NotTo(HaveOccurred())

	By(fmt.Sprintf("pinned: %d commands through a %s pool pinned to %s on keys other primaries own", s.PinnedOps, b, owner.Name()))
	before := statsOf(ctx, cluster)
	observed := map[int]float64{}
	for i := range s.PinnedOps {
		k := keys[i%len(keys)]
		cmd := client.NewCmd("GET", []string{k})
		if i%2 == 1 {
			cmd = client.NewCmd("SET", []string{k}, "1")
		}
		start := traffic.ClockOf(ctx).Now()
		_, err := gp.Do(ctx, cmd)
		harness.Call(ctx, string(b)+" pinned", strings.ToLower(cmd.Prefix[0]), start, err)
		if routing.Redirected(err) {
			observed[keySlot[k]]++
		}
	}
	after := statsOf(ctx, cluster)
	sent := redirectsSent(before, after, owner.Addr())
	tallies := func(samples []history.TelemetrySample) []judge.RedirectTally {
		var total float64
		var out []judge.RedirectTally
		for sl, n := range observed {
			total += n
			out = append(out, judge.RedirectTally{Scope: fmt.Sprintf("pinned %s slot %d", owner.Name(), sl),
				Counted: judge.Sum(samples, telemetry.RedirectsName, map[string]string{"node": owner.Addr(), "slot": fmt.Sprint(sl)}), Observed: n, ServerSent: sent})
		}
		return append(out, judge.RedirectTally{Scope: "pinned " + owner.Name(), Counted: judge.Sum(samples, telemetry.RedirectsName, map[string]string{"node": owner.Addr()}), Observed: total, ServerSent: sent, ServerExact: true})
	}
	scraped = scrape(ctx, gm)
	return tallies(scraped.Samples), tallies(withoutFamily(scraped.Samples, telemetry.RedirectsName)), scraped, sent
}

// migratingTallies drives SET/GET/MGET through the relay's redirect-
// absorbing call path over the instrumented cluster pool while slots
// migrate with an ASK hold. The call path's own count (re-sends plus
// redirects it finally returned) is the observation; the servers'
// errorstats bound it: the client library follows most redirects itself.
func migratingTallies(ctx context.Context, b client.Backend, name string) (good, drop judge.RedirectTally, scraped history.TelemetryScrape, faults []fault.Window) {
	GinkgoHelper()
	s := scaleOf()
	rng := cfg.Rand(name)
	slots := harness.DistinctSlots(rng, 2)
	gm := telemetry.New(telemetry.Options{Pod: "migrating"})
	gp, err := telemetry.WrapPool(ctx, harness.Pool(ctx, b, cluster), gm, telemetry.PoolOptions{})
	Expect(err).NotTo(HaveOccurred())
	var absorbed, returned atomic.Int64
	path := routing.Wrap(gp, routing.Options{Absorbed: &absorbed})

	By(fmt.Sprintf("migrating: SET/GET/MGET on slots %v while they move %d times, held MIGRATING %v", slots, s.Moves, s.Hold))
	before := statsOf(ctx, cluster)
	clock := traffic.ClockOf(ctx) // the scenario's: its commands and slot moves share the timeline
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, sl := range slots {
		for w := range 2 {
			tag := tagIn(fmt.Sprintf("mv%x-%d", rng.Uint32(), w), sl)
			a, c := "tm:{"+tag+"}:a", "tm:{"+tag+"}:b"
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					var cmd client.Cmd
					switch i % 3 {
					case 0:
						cmd = client.NewCmd("SET", []string{a}, fmt.Sprint(i))
					case 1:
						cmd = client.NewCmd("GET", []string{c})
					default:
						cmd = client.NewCmd("MGET", []string{a, c})
					}
					octx, cancel := context.WithTimeout(ctx, 2*time.Second)
					start := clock.Now()
					_, err := path.Do(octx, cmd)
					cancel()
					harness.Call(ctx, string(b)+" routing.Wrap", strings.ToLower(cmd.Prefix[0]), start, err)
					if routing.Redirected(err) {
						returned.Add(1)
					}
				}
			})
		}
	}
	for i := range s.Moves {
		w, err := fault.Apply(ctx, cluster, fault.MoveSlot{Slot: slots[i%len(slots)], To: -1, Hold: s.Hold})
		if err != nil {
			close(stop)
			wg.Wait()
			harness.MustConfirm(err, cfg.Seed)
		}
		faults = append(faults, w)
	}
	close(stop)
	wg.Wait()
	after := statsOf(ctx, cluster)
	observed := float64(absorbed.Load() + returned.Load())
	sent := redirectsSent(before, after)
	scraped = scrape(ctx, gm)
	good = judge.RedirectTally{Scope: "cluster pool under migration", Counted: judge.Sum(scraped.Samples, telemetry.RedirectsName, nil), Observed: observed, ServerSent: sent}
	drop = good
	drop.Counted = judge.Sum(withoutFamily(mustScrape(ctx, gm), telemetry.RedirectsName), telemetry.RedirectsName, nil)
	return good, drop, scraped, faults
}

func redirects(ctx SpecContext, b client.Backend) report.Check {
	name := "telemetry/redirects/" + string(b)
	pinned, pinnedDrop, pinnedScrape, pinnedSent := pinnedTallies(ctx, b, name+"/pinned")
	migrating, migratingDrop, migratingScrape, faults := migratingTallies(ctx, b, name+"/migrating")
	result := check.All("telemetry-redirects",
		judge.Redirects.Judge(judge.RedirectRun{Tallies: append(pinned, migrating), MinObserved: 1}),
		judge.Exposed.Judge(judge.Exposure{Scrape: pinnedScrape, Required: []string{telemetry.CommandsName, telemetry.RedirectsName}, Nodes: nodeAddrs(cluster)}),
		judge.Exposed.Judge(judge.Exposure{Scrape: migratingScrape, Required: []string{telemetry.CommandsName, telemetry.SlotMapRefreshesName}, Nodes: nodeAddrs(cluster)}))
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Client = versions.Get(ctx, b)
	ev.Faults = harness.Windows(faults...)
	ev.Metrics = map[string]float64{
		"pinned_moved_sent":             pinnedSent,
		"pinned_moved_counted":          pinned[len(pinned)-1].Counted,
		"migrating_redirects_sent":      migrating.ServerSent,
		"migrating_redirects_at_seam":   migrating.Observed,
		"migrating_redirects_counted":   migrating.Counted,
		"migrating_seam_visible_pct":    100 * migrating.Observed / max(migrating.ServerSent, 1),
		"migrating_slot_moves":          float64(len(faults)),
		"migrating_slotmap_refreshes":   judge.Sum(migratingScrape.Samples, telemetry.SlotMapRefreshesName, nil),
		"migrating_commands_attributed": judge.Sum(migratingScrape.Samples, telemetry.CommandsName, nil),
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("under %d slot moves the servers sent %.0f MOVED/ASK/TRYAGAIN replies to this %s pool; %.0f reached the seam (%.1f%%): the library followed the rest itself, so only the servers' errorstats count every redirect per node",
		len(faults), migrating.ServerSent, b, migrating.Observed, 100*migrating.Observed/max(migrating.ServerSent, 1)))
	By("negative control: the drop-redirects instrument over the same commands")
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant(dropRedirects, "an instrument that never counts a MOVED/ASK/TRYAGAIN reply: redirect storms during a migration stay invisible", judge.Redirects.Judge(judge.RedirectRun{Tallies: append(pinnedDrop, migratingDrop), MinObserved: 1})))
}
