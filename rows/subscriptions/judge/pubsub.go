package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/slot"
)

// pushDelivery is the subscriptions row's wire check (spec 000 §Client
// Architecture 1–2: sharded subscriptions ride RESP3 push frames;
// §Conformance, Subscriptions: "RESP3 push delivery"): every connection of
// the subscription client that holds a subscription (named name, or
// unnamed: a library's dedicated pub/sub connection may skip SETNAME)
// negotiated RESP3, and together they hold at least the exact topics and
// patterns the application holds — so the connections judged are the ones
// that delivered. A subscription held over RESP2 fails: its messages came
// as RESP2 pub/sub replies on a connection in subscribe mode, not as
// pushes, and nothing in the deliveries shows it.
func pushDelivery(conns []check.ClientConn, name string, exact, patterns int) check.Result {
	const checker = "resp3-push-delivery"
	var ssub, psub, total int
	var bad []string
	for _, c := range conns {
		if (c.Name != name && c.Name != "") || c.Sub+c.PSub+c.SSub == 0 {
			continue
		}
		total++
		ssub += c.SSub
		psub += c.PSub
		if c.Resp != 3 {
			bad = append(bad, fmt.Sprintf("%s id=%s name=%s resp=%d ssub=%d psub=%d sub=%d", c.Node, c.ID, c.Name, c.Resp, c.SSub, c.PSub, c.Sub))
		}
	}
	obs := []string{fmt.Sprintf("%d subscribed connection(s) of %s: ssub %d, psub %d (application holds %d topics, %d patterns)", total, name, ssub, psub, exact, patterns)}
	var r check.Result
	switch {
	case len(bad) > 0:
		r = check.Failf(checker, strings.Join(check.Elide(bad, 5), "\n"), "%d of %d subscribed connections of %s did not negotiate RESP3: delivery is not push", len(bad), total, name)
	case ssub < exact || psub < patterns:
		r = check.Unknownf(checker, "the subscribed connections of %s hold %d shard channels and %d patterns, the application %d and %d: the delivering connections were not all observed", name, ssub, psub, exact, patterns)
	default:
		r = check.Passf(checker, "all %d subscribed connections of %s speak RESP3 (%d shard channels, %d patterns): delivery by push", total, name, ssub, psub)
	}
	r.Observed = obs
	return r
}

// topicKinds are the exact topic kinds spec 000 §Sharded Pub/Sub
// Conversion names.
var topicKinds = []string{"channel", "global"}

// topicsSpread is spec 000 §Sharded Pub/Sub Conversion: exact topics carry
// no hash tag, so "each topic hashing to its own slot is what spreads
// propagation cost across shards; a {community} tag would recreate the hot
// node per community". On impl's own topic names, of every kind the spec
// names: none carries a hash tag; each community's channel topics sit on
// more than one shard of the live cluster; and no shard served every
// SPUBLISH of a community. Premises, else unknown: at least two shards,
// both topic kinds, minPerCommunity channel topics per community (so one
// shard holding them all by chance is negligible: 3^-(n-1)), every topic
// placed on exactly one live primary, and every message delivered — the
// workload worked, so a failure here is silent.
func topicsSpread(run TopicSpreadRun, minPerCommunity int) check.Result {
	const name = "topics-spread"
	kinds := map[string]int{}
	perCommunity := map[string]map[int]int{} // community → shard → channel topics
	var tagged, unplaced []string
	for _, t := range run.Topics {
		kinds[t.Kind]++
		if slot.HashTag(t.Topic) != t.Topic {
			tagged = append(tagged, fmt.Sprintf("%s topic %q hashes only %q (slot %d)", t.Kind, t.Topic, slot.HashTag(t.Topic), slot.Of(t.Topic)))
		}
		if t.Shard < 0 {
			unplaced = append(unplaced, t.Topic)
			continue
		}
		if t.Kind == "channel" {
			if perCommunity[t.Community] == nil {
				perCommunity[t.Community] = map[int]int{}
			}
			perCommunity[t.Community][t.Shard]++
		}
	}
	var pinned []string
	communities := make([]string, 0, len(perCommunity))
	for c := range perCommunity {
		communities = append(communities, c)
	}
	slices.Sort(communities)
	// A community with fewer channel topics than the premise asks is not
	// judged for spread (nine topics on one shard is a finding; one is
	// chance); hash tags are judged on every topic.
	enough := func(c string) bool {
		n := 0
		for _, k := range perCommunity[c] {
			n += k
		}
		return n >= minPerCommunity
	}
	for _, c := range communities {
		if len(perCommunity[c]) == 1 && enough(c) {
			for s, n := range perCommunity[c] {
				pinned = append(pinned, fmt.Sprintf("community %s: all %d channel topics on shard %d", c, n, s))
			}
		}
	}
	load := map[string]map[int]int64{}
	for _, l := range run.Loads {
		if load[l.Community] == nil {
			load[l.Community] = map[int]int64{}
		}
		load[l.Community][l.Shard] += l.Calls
	}
	var hot []string
	for _, c := range communities {
		var total, top int64
		busy := -1
		for s, n := range load[c] {
			total += n
			if n > top {
				top, busy = n, s
			}
		}
		if total > 0 && top == total && enough(c) {
			hot = append(hot, fmt.Sprintf("community %s: shard %d served all %d SPUBLISH calls", c, busy, total))
		}
	}
	obs := []string{fmt.Sprintf("%d topics (%d channel, %d global) of %d communities over %d shards; channel topics per shard by community: %v; SPUBLISH per shard by community: %v; %d of %d messages delivered",
		len(run.Topics), kinds["channel"], kinds["global"], len(communities), run.Shards, perCommunity, load, run.Delivered, run.Published)}
	var r check.Result
	switch {
	case run.Shards < 2:
		r = check.Unknownf(name, "%d shard(s): spread is not observable", run.Shards)
	case len(unplaced) > 0:
		r = check.Unknownf(name, "%d topics on no live primary's PUBSUB SHARDCHANNELS (%s): placement not observed", len(unplaced), strings.Join(check.Elide(unplaced, 3), ", "))
	case run.Published == 0 || run.Delivered < run.Published:
		r = check.Unknownf(name, "%d of %d messages delivered: the workload did not work, so its spread proves nothing", run.Delivered, run.Published)
	case len(tagged)+len(pinned)+len(hot) > 0:
		r = check.Failf(name, strings.Join(check.Elide(append(append(tagged, pinned...), hot...), 8), "\n"),
			"%d hash-tagged topics, %d communities pinned to one shard, %d communities whose SPUBLISH load one shard carried alone — every message delivered", len(tagged), len(pinned), len(hot))
	default:
		var missing []string
		for _, k := range topicKinds {
			if kinds[k] == 0 {
				missing = append(missing, k)
			}
		}
		few := ""
		for _, c := range communities {
			n := 0
			for _, k := range perCommunity[c] {
				n += k
			}
			if n < minPerCommunity {
				few = fmt.Sprintf("community %s has %d channel topics, need %d", c, n, minPerCommunity)
			}
		}
		switch {
		case len(missing) > 0:
			r = check.Unknownf(name, "no %s topic judged", strings.Join(missing, ", "))
		case len(communities) == 0 || few != "":
			r = check.Unknownf(name, "too few topics to judge a spread: %s", few)
		case len(load) < len(communities):
			r = check.Unknownf(name, "SPUBLISH load measured for %d of %d communities", len(load), len(communities))
		default:
			r = check.Passf(name, "%d topics of %d kinds untagged; every one of %d communities spread over more than one shard, in placement and in SPUBLISH load", len(run.Topics), len(kinds), len(communities))
		}
	}
	r.Observed = obs
	return r
}
