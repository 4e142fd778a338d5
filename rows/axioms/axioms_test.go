package axioms_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/rows/axioms/judge"
	"github.com/slotgate/slotgate/rows/axioms/workload"
	"github.com/slotgate/slotgate/suites/harness"

	. "github.com/onsi/ginkgo/v2"
)

const row = report.RowAxioms

var _ = Describe("axioms", func() {
	harness.Emit(
		harness.Scenario{
			Name: "axioms/a1-slot-math", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "A1: slot = CRC16 of the hash tag mod 16384, equal to CLUSTER KEYSLOT (000 §Axioms)",
			Run:  slotMath,
		},
		harness.Scenario{
			Name: "axioms/a2-crossslot", Row: row, Column: report.ColumnErrors,
			Spec: "A2: a script whose declared keys span slots is refused with CROSSSLOT on any cluster-enabled node, single shard included (000 §Axioms)",
			Run:  crossSlot,
		},
		harness.Scenario{
			Name: "axioms/a2-undeclared-keys", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "A2 refinement: undeclared keys bypass the slot check; a remote one errors after earlier writes applied (000 §Axioms)",
			Run:  undeclaredKeys,
		},
		harness.Scenario{
			Name: "axioms/a4-publish-cost", Row: row, Column: report.ColumnSilentlyWrong,
			Spec: "A4: classic PUBLISH reaches every node; SPUBLISH only the channel's shard (000 §Axioms)",
			Run:  publishCost,
		},
	)
})

// ignoresHashTags is a known-bad slot function: CRC16 of the whole key.
func ignoresHashTags(key string) int { return int(slot.CRC16([]byte(key))) % slot.Count }

// lastTagWins is a known-bad slot function: it hashes the LAST {...} tag.
func lastTagWins(key string) int {
	end := strings.LastIndexByte(key, '}')
	if end > 0 {
		if start := strings.LastIndexByte(key[:end], '{'); start >= 0 && end > start+1 {
			return slot.Of("{" + key[start+1:end] + "}")
		}
	}
	return slot.Of(key)
}

func slotMath(ctx SpecContext) report.Check {
	scale := cfg.Scale()
	rng := cfg.Rand("axioms/a1-slot-math")
	keys := append(append([]string{}, workload.SlotEdgeCases...), workload.RandomKeys(rng, scale.SlotSamples)...)
	node := cluster.Primaries()[0]
	By(fmt.Sprintf("asking CLUSTER KEYSLOT for %d keys", len(keys)))
	samples, err := workload.SampleSlots(ctx, node, keys, slot.Of)
	Expect(err).NotTo(HaveOccurred())
	ev := harness.Evidence(cfg, cluster, nil)
	ev.Metrics = map[string]float64{"keys": float64(len(samples)), "edge_cases": float64(len(workload.SlotEdgeCases))}
	relabel := func(f func(string) int) []judge.SlotSample {
		out := make([]judge.SlotSample, len(samples))
		for i, s := range samples {
			out[i] = judge.SlotSample{Key: s.Key, Local: f(s.Key), Server: s.Server}
		}
		return out
	}
	return harness.Check(row, report.ColumnSilentlyWrong, "", judge.SlotMathAgrees.Judge(judge.SlotSamples{Samples: samples, MinSamples: scale.SlotSamples}), ev,
		harness.Variant("ignores-hash-tags", "CRC16 of the whole key: tagged pairs land in different slots", judge.SlotMathAgrees.Judge(judge.SlotSamples{Samples: relabel(ignoresHashTags), MinSamples: 1})),
		harness.Variant("last-tag-wins", "hashes the last {…} instead of the first: a{b}{c} goes to c's slot", judge.SlotMathAgrees.Judge(judge.SlotSamples{Samples: relabel(lastTagWins), MinSamples: 1})),
	)
}

func crossSlot(ctx SpecContext) report.Check {
	rng := cfg.Rand("axioms/a2-crossslot")
	ev := harness.Evidence(cfg, cluster, nil)
	var untagged, tagged, disabled []history.OpOutcome
	for _, s := range harness.Sessions(rng, "a2", 8) {
		old, tag := fencing.OldKeys(s), fencing.NewKeys(s)
		untagged = append(untagged,
			workload.EvalTwoKeys(ctx, cluster.Primaries()[0], old.Lease, old.Generation),
			workload.EvalTwoKeys(ctx, single.Primaries()[0], old.Lease, old.Generation))
		owner, err := cluster.NodeForSlot(ctx, slot.Of(tag.Lease))
		Expect(err).NotTo(HaveOccurred())
		tagged = append(tagged, workload.EvalTwoKeys(ctx, owner, tag.Lease, tag.Generation))
		disabled = append(disabled, workload.EvalTwoKeys(ctx, standalone.Primaries()[0], old.Lease, old.Generation))
	}
	ev.Observed = append(ev.Observed, "un-tagged pairs: "+fmt.Sprint(len(untagged))+" EVALs on "+cluster.Spec.String()+" primary 0 and the single-shard node", untagged[0].Op+" → "+untagged[0].Err)
	result := check.All("a2-crossslot",
		check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: untagged, Want: "CROSSSLOT"}),
		check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: tagged, MinOps: len(tagged)}),
	)
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("cluster-mode-disabled", "the same un-tagged EVAL on a standalone node: slot rules unenforced, so a mis-tagged pair stays invisible until G3", check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: disabled, Want: "CROSSSLOT"})),
	)
}

func undeclaredKeys(ctx SpecContext) report.Check {
	ev := harness.Evidence(cfg, cluster, nil)
	obs, err := workload.ProbeUndeclaredKeys(ctx, cluster)
	Expect(err).NotTo(HaveOccurred())
	onOneShard, err := workload.ProbeUndeclaredKeys(ctx, single)
	Expect(err).NotTo(HaveOccurred())
	return harness.Check(row, report.ColumnSilentlyWrong, "", judge.UndeclaredKeyHazard.Judge(obs), ev,
		harness.Variant("single-shard", "on a single-shard node every key is local: undeclared access succeeds silently and the hazard stays hidden until slots split", judge.UndeclaredKeyHazard.Judge(onOneShard)),
	)
}

func publishCost(ctx SpecContext) report.Check {
	scale := cfg.Scale()
	ev := harness.Evidence(cfg, cluster, nil)
	const channel = "buzz:community-a:global"
	owner, err := cluster.NodeForSlot(ctx, slot.Of(channel))
	Expect(err).NotTo(HaveOccurred())
	shard := -1
	for i, p := range cluster.Primaries() {
		if p == owner {
			shard = i
		}
	}
	n := int64(scale.PublishMessages)
	By(fmt.Sprintf("classic PUBLISH ×%d to %s", n, owner.Name()))
	classic, err := workload.PublishBurst(ctx, cluster, owner, channel, false, int(n))
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("SPUBLISH ×%d to %s (the channel's owner)", n, owner.Name()))
	sharded, err := workload.PublishBurst(ctx, cluster, owner, channel, true, int(n))
	Expect(err).NotTo(HaveOccurred())

	cpuClassic, cpuSharded := judge.CPUOutside(classic, shard), judge.CPUOutside(sharded, shard)
	ev.Metrics = map[string]float64{
		"messages":                             float64(n),
		"cpu_ms_outside_owner_shard_classic":   ms(cpuClassic),
		"cpu_ms_outside_owner_shard_sharded":   ms(cpuSharded),
		"cpu_ratio_outside_classic_vs_sharded": ms(cpuClassic) / max(ms(cpuSharded), 0.001),
	}
	for _, d := range classic {
		ev.Observed = append(ev.Observed, fmt.Sprintf("classic: %s (shard %d) bus publish received %d, main-thread CPU %v", d.Node, d.Shard, d.PublishReceived, d.CPU))
	}
	for _, d := range sharded {
		ev.Observed = append(ev.Observed, fmt.Sprintf("sharded: %s (shard %d) bus shard-publish received %d, main-thread CPU %v", d.Node, d.Shard, d.ShardPublishReceived, d.CPU))
	}
	result := check.All("a4-publish-cost", judge.BroadcastReachesAll.Judge(judge.Burst{Deltas: classic, Messages: n}), judge.ShardConfined.Judge(judge.ShardBurst{Deltas: sharded, OwnerShard: shard, Messages: n}))
	return harness.Check(row, report.ColumnSilentlyWrong, "", result, ev,
		harness.Variant("exact-topic-on-classic-publish", "an exact topic left on classic PUBLISH (P2 not done): its traffic is not confined to a shard", judge.ShardConfined.Judge(judge.ShardBurst{Deltas: classic, OwnerShard: shard, Messages: n})),
	)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
