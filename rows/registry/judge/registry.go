package judge

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slotgate/slotgate/check"
)

// RegistryBounds are the contract's parameters (spec 000 §Mesh Registry
// Discovery) and the checker's own assumptions.
type RegistryBounds struct {
	// Interval is the heartbeat interval: a live runtime must be
	// discoverable within it.
	Interval time.Duration
	// TTL is the record lifetime after a heartbeat.
	TTL time.Duration
	// Grace is the slack past expiry before a dead runtime must be gone.
	Grace time.Duration
	// MinDiscoveries and MinRequired guard against a run too small to mean
	// anything: successful discoveries, and (discovery, live runtime) pairs
	// that completeness was judged on.
	MinDiscoveries, MinRequired int
}

// clockSlack absorbs the Unix-millisecond truncation of index scores and
// the gap between the monotonic and wall clocks within one process.
const clockSlack = 5 * time.Millisecond

// runtimeLife is one runtime's heartbeats and end, indexed from a history.
type runtimeLife struct {
	beats    []RegistryOp // every heartbeat, in call order
	firstAck time.Duration
	joined   bool
	ended    bool
	end      time.Duration // call of the deregister or the crash
	endKind  RegistryOpKind
	deregAck time.Duration // Return of an acknowledged deregister
	deregOK  bool
}

func lives(h RegistryHistory) map[string]*runtimeLife {
	out := map[string]*runtimeLife{}
	get := func(id string) *runtimeLife {
		if out[id] == nil {
			out[id] = &runtimeLife{}
		}
		return out[id]
	}
	ops := append([]RegistryOp(nil), h.Ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	for _, op := range ops {
		switch op.Kind {
		case RegHeartbeat:
			l := get(op.Runtime)
			l.beats = append(l.beats, op)
			if op.ErrKind == "" && (!l.joined || op.Return < l.firstAck) {
				l.joined, l.firstAck = true, op.Return
			}
		case RegDeregister, RegCrash:
			l := get(op.Runtime)
			if !l.ended {
				l.ended, l.end, l.endKind = true, op.Call, op.Kind
			}
			if op.Kind == RegDeregister && op.ErrKind == "" {
				l.deregOK, l.deregAck = true, op.Return
			}
		}
	}
	return out
}

// required says whether runtime l must appear in discovery d: it joined at
// least one interval before d began, had not begun to leave or crashed by
// the time d returned, and holds an acknowledged heartbeat, complete before
// d began, whose record outlives d.
func (b RegistryBounds) required(l *runtimeLife, d RegistryOp) bool {
	if !l.joined || l.firstAck > d.Call-b.Interval || (l.ended && l.end <= d.Return) {
		return false
	}
	for _, hb := range l.beats {
		if hb.ErrKind == "" && hb.Return <= d.Call && hb.Call+b.TTL-clockSlack > d.Return {
			return true
		}
	}
	return false
}

// RegistryCoverage is completeness as numbers: over the successful
// discoveries, how many (discovery, live runtime) pairs were required and
// how many of them were found, and one line per incomplete discovery.
type RegistryCoverage struct {
	Discoveries, Required, Found int
	Incomplete                   []string
}

// Percent is Found/Required in percent (100 when nothing was required).
func (c RegistryCoverage) Percent() float64 {
	if c.Required == 0 {
		return 100
	}
	return 100 * float64(c.Found) / float64(c.Required)
}

// Coverage measures completeness of h under b (see RegistryComplete).
func Coverage(h RegistryHistory, b RegistryBounds) RegistryCoverage {
	var c RegistryCoverage
	life := lives(h)
	ids := sortedIDs(life)
	for _, d := range h.Ops {
		if d.Kind != RegDiscover || d.ErrKind != "" {
			continue
		}
		c.Discoveries++
		got := map[string]bool{}
		for _, e := range d.Found {
			got[e.ID] = true
		}
		var miss []string
		for _, id := range ids {
			if !b.required(life[id], d) {
				continue
			}
			c.Required++
			if got[id] {
				c.Found++
			} else {
				miss = append(miss, id)
			}
		}
		if len(miss) > 0 {
			c.Incomplete = append(c.Incomplete, fmt.Sprintf("discovery %v–%v returned %d runtimes, missed %d live: %s",
				d.Call.Round(time.Millisecond), d.Return.Round(time.Millisecond), len(d.Found), len(miss), strings.Join(check.Elide(miss, 4), ", ")))
		}
	}
	return c
}

// complete is bounded discoverability (spec 000 §Conformance,
// Registry index): every successful discovery returned every runtime of the
// KNOWN population that was live and heartbeating for at least one interval
// around it. It is asserted against the population, not inferred from the
// absence of errors: a partial SCAN raises none.
func complete(h RegistryHistory, b RegistryBounds) check.Result {
	const name = "registry-complete"
	c := Coverage(h, b)
	if c.Discoveries < b.MinDiscoveries || c.Required < b.MinRequired {
		return check.Unknownf(name, "only %d discoveries judged on %d live runtimes (need %d and %d)", c.Discoveries, c.Required, b.MinDiscoveries, b.MinRequired)
	}
	r := check.Passf(name, "%d discoveries found all %d live runtimes they had to", c.Discoveries, c.Required)
	if len(c.Incomplete) > 0 {
		r = check.Failf(name, strings.Join(check.Elide(c.Incomplete, 5), "\n"), "%d of %d discoveries incomplete: found %d of %d live runtimes (%.1f%%)",
			len(c.Incomplete), c.Discoveries, c.Found, c.Required, c.Percent())
	}
	return r
}

// noStale is the expiry half of the contract: no discovery returns
// a runtime that deregistered, or crashed and whose last record expired,
// more than Grace before the discovery began; nor one that had not yet sent
// a single heartbeat.
func noStale(h RegistryHistory, b RegistryBounds) check.Result {
	const name = "registry-no-stale"
	life := lives(h)
	var stale []string
	judged := 0
	for _, d := range h.Ops {
		if d.Kind != RegDiscover || d.ErrKind != "" {
			continue
		}
		for _, e := range d.Found {
			l, ok := life[e.ID]
			if !ok {
				continue // not a runtime of the population: attested's business
			}
			judged++
			switch {
			case len(l.beats) == 0 || l.beats[0].Call > d.Return:
				stale = append(stale, fmt.Sprintf("%s returned at %v before its first heartbeat", e.ID, d.Call.Round(time.Millisecond)))
			case l.deregOK && l.deregAck+b.Grace <= d.Call:
				stale = append(stale, fmt.Sprintf("%s returned at %v, deregistered at %v", e.ID, d.Call.Round(time.Millisecond), l.deregAck.Round(time.Millisecond)))
			case l.ended && l.endKind == RegCrash:
				var last time.Duration
				for _, hb := range l.beats {
					if hb.Call < l.end {
						last = max(last, hb.Return)
					}
				}
				if last+b.TTL+b.Grace <= d.Call {
					stale = append(stale, fmt.Sprintf("%s returned at %v, crashed at %v, last record expired by %v", e.ID,
						d.Call.Round(time.Millisecond), l.end.Round(time.Millisecond), (last+b.TTL).Round(time.Millisecond)))
				}
			}
		}
	}
	if len(stale) > 0 {
		return check.Failf(name, strings.Join(check.Elide(stale, 5), "\n"), "%d dead runtimes returned past their expiry + %v grace", len(stale), b.Grace)
	}
	return check.Passf(name, "no dead runtime returned past expiry + %v (%d returned entries judged)", b.Grace, judged)
}

// attested: every returned runtime belongs to the known population
// and carries the address that runtime published — a forged, replayed or
// unsigned record is never returned (spec 000 §Mesh Registry Discovery).
func attested(h RegistryHistory) check.Result {
	const name = "registry-attested"
	var bad []string
	n := 0
	for _, d := range h.Ops {
		if d.Kind != RegDiscover || d.ErrKind != "" {
			continue
		}
		for _, e := range d.Found {
			n++
			addr, ok := h.Population[e.ID]
			switch {
			case !ok:
				bad = append(bad, fmt.Sprintf("%q (addr %s) returned at %v: not a runtime of the population", e.ID, e.Addr, d.Call.Round(time.Millisecond)))
			case addr != e.Addr:
				bad = append(bad, fmt.Sprintf("%q returned with addr %s at %v, published %s", e.ID, e.Addr, d.Call.Round(time.Millisecond), addr))
			}
		}
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(check.Elide(bad, 5), "\n"), "%d unattested records returned", len(bad))
	}
	return check.Passf(name, "%d returned entries, all attested members of the population", n)
}

// skipsClassified: discovery skips what it must not return, each in
// its class (registry.Discovery's Undecodable and Unattested, spec 000 §Mesh
// Registry Discovery): over the successful discoveries no more records were
// skipped as unattested than the forgeries that are well-formed but do not
// verify, and no more as undecodable than those that are not records at all
// (the population's own records are neither). Counting a torn record as
// unattested means its body was never parsed before the attestation was
// checked. Early discoveries see only part of the forgeries, so the counts
// are bounded, not equal.
func skipsClassified(discoveries int, unattested, undecodable int64, forgedUnattested, forgedUndecodable int) check.Result {
	const name = "registry-skips-classified"
	var bad []string
	if max := int64(discoveries * forgedUnattested); unattested > max {
		bad = append(bad, fmt.Sprintf("%d records skipped as unattested, at most %d (%d discoveries × %d such forgeries)", unattested, max, discoveries, forgedUnattested))
	}
	if max := int64(discoveries * forgedUndecodable); undecodable > max {
		bad = append(bad, fmt.Sprintf("%d records skipped as undecodable, at most %d (%d discoveries × %d such forgeries)", undecodable, max, discoveries, forgedUndecodable))
	}
	if len(bad) > 0 {
		return check.Failf(name, strings.Join(bad, "\n"), "discoveries skipped records in the wrong class")
	}
	return check.Passf(name, "%d unattested and %d undecodable skips over %d discoveries, within %d and %d forgeries each", unattested, undecodable, discoveries, forgedUnattested, forgedUndecodable)
}

// bounded is the silently-wrong checker of the registry row.
func bounded(h RegistryHistory, b RegistryBounds) check.Result {
	return check.All("registry-bounded", complete(h, b), noStale(h, b), attested(h))
}

// errorsOutside is the errors column: every heartbeat, deregister,
// discovery and prune that did not overlap a fault window (extended by
// settle, the clients' time to find the new topology) was acknowledged.
// minOps guards against a run that never happened.
func errorsOutside(h RegistryHistory, windows []check.Span, settle time.Duration, minOps int) check.Result {
	const name = "registry-errors-outside-faults"
	outside, inside, insideErr := 0, 0, 0
	byKind := map[string]int{}
	var firstErr []string
	for _, op := range h.Ops {
		if op.Kind == RegCrash {
			continue
		}
		during := false
		for _, w := range windows {
			if op.Call <= w.End+settle && op.Return >= w.Start {
				during = true
			}
		}
		if during {
			inside++
			if op.ErrKind != "" {
				insideErr++
			}
			continue
		}
		outside++
		if op.ErrKind != "" {
			byKind[op.ErrKind]++
			firstErr = append(firstErr, fmt.Sprintf("%s %s at %v: %s", op.Kind, op.Runtime, op.Call.Round(time.Millisecond), op.Err))
		}
	}
	obs := fmt.Sprintf("%d operations inside fault windows (+%v settle), %d of them failed", inside, settle, insideErr)
	if outside < minOps {
		r := check.Unknownf(name, "only %d operations outside fault windows, need %d", outside, minOps)
		r.Observed = []string{obs}
		return r
	}
	r := check.Passf(name, "%d operations outside fault windows, no errors", outside)
	if len(byKind) > 0 {
		r = check.Failf(name, strings.Join(check.Elide(firstErr, 5), "\n"), "%s in %d operations outside fault windows", check.CountKinds(byKind), outside)
	}
	r.Observed = []string{obs}
	return r
}

// RegistryErrKinds counts the error kinds of a history's failed operations.
func RegistryErrKinds(h RegistryHistory) map[string]int {
	out := map[string]int{}
	for _, op := range h.Ops {
		if op.ErrKind != "" {
			out[op.ErrKind]++
		}
	}
	return out
}

func sortedIDs(m map[string]*runtimeLife) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// scanSubset is the verdict on the legacy scan_ready() discovery (SCAN has
// no key, so a cluster client sends it to one node and the cursor ends
// there): RegistryBounded over its run on the cluster (clusterSpec), which
// must fail — a per-call subset — for the reason it models. Its premise is
// that the subset is silent (no discovery error outside any fault,
// errorsOutside) and that the same scan is complete on a
// standalone node (single): the check is about the cluster. Without it the
// verdict is unknown, never caught.
func scanSubset(onCluster, single RegistryHistory, b RegistryBounds, clusterSpec string) check.Result {
	scanCluster := bounded(onCluster, b)
	scanSingle := bounded(single, b)
	errs := errorsOutside(onCluster, nil, 0, 1)
	r := check.Result{Checker: "registry-scan-subset", Status: scanCluster.Status, Counterexample: scanCluster.Counterexample,
		Message: fmt.Sprintf("on %s: %s (completeness %.1f%%; %s) | on standalone: %s (completeness %.1f%%)",
			clusterSpec, scanCluster.Message, Coverage(onCluster, b).Percent(), errs.Message, scanSingle.Message, Coverage(single, b).Percent())}
	if (r.Status == check.Pass || r.Status == check.Fail) && (errs.Status != check.Pass || scanSingle.Status != check.Pass) {
		r.Status = check.Unknown
		r.Message = "the scan was not silent on the cluster or not complete on the standalone node: " + r.Message
	}
	return r
}

// Run is a mesh run and the bounds it is judged under.
type Run struct {
	History RegistryHistory
	Bounds  RegistryBounds
}

// Skips is what the discoveries of a run skipped, and the forgeries planted
// (skipsClassified).
type Skips struct {
	Discoveries                         int
	Unattested, Undecodable             int64
	ForgedUnattested, ForgedUndecodable int
}

// OpsRun is a mesh run with its fault windows, the settle time after each,
// and the fewest operations outside them that make a verdict
// (errorsOutside).
type OpsRun struct {
	History RegistryHistory
	Windows []check.Span
	Settle  time.Duration
	MinOps  int
}

// ScanRuns are the legacy SCAN discovery's runs on the cluster and on a
// standalone node (scanSubset).
type ScanRuns struct {
	OnCluster, Single RegistryHistory
	Bounds            RegistryBounds
	ClusterSpec       string
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	Complete        = check.Define("registry/complete", func(r Run) check.Result { return complete(r.History, r.Bounds) }, "RegistryComplete")
	NoStale         = check.Define("registry/no-stale", func(r Run) check.Result { return noStale(r.History, r.Bounds) }, "RegistryNoStale")
	Attested        = check.Define("registry/attested", attested, "RegistryAttested")
	SkipsClassified = check.Define("registry/skips-classified", func(s Skips) check.Result {
		return skipsClassified(s.Discoveries, s.Unattested, s.Undecodable, s.ForgedUnattested, s.ForgedUndecodable)
	}, "RegistrySkipsClassified")
	Bounded       = check.Define("registry/bounded", func(r Run) check.Result { return bounded(r.History, r.Bounds) }, "RegistryBounded")
	ErrorsOutside = check.Define("registry/errors-outside-faults", func(r OpsRun) check.Result {
		return errorsOutside(r.History, r.Windows, r.Settle, r.MinOps)
	}, "RegistryErrorsOutside")
	ScanSubset = check.Define("registry/scan-subset", func(r ScanRuns) check.Result {
		return scanSubset(r.OnCluster, r.Single, r.Bounds, r.ClusterSpec)
	}, "ScanSubset")
)
