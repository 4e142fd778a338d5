package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Spec 000 §Client Architecture: the protocol and the client are "admitted
// only by the conformance gate (G2), never assumed". The scorecard gates the
// implementation (impl's call paths over a client); the admission table says
// what the client library does on its own. For each backend and each
// client-facing G2 requirement it records the RAW client's verdict:
// admitted as it is, admitted only behind a named impl wrapper, or refused.
//
// The table stands next to the gate and never changes it: a client that
// needs a wrapper is deployable only with that wrapper, which the gate
// scores; a refused client is named on its own line under the gate's
// headline (terminal, Markdown, HTML), because a passing gate says nothing
// about deploying that client without impl. An (backend, requirement) pair
// no run assessed reads "not assessed", never admitted.

// AdmissionEntryName is the Ginkgo report-entry name a suite records an
// Admission under (harness.Admit).
const AdmissionEntryName = "slotgate.admission"

// Requirement is one client-facing G2 requirement of spec 000.
type Requirement string

// The client-facing requirements of spec 000 §Conformance and §Client
// Architecture, in table order.
const (
	RequirementRedirects         Requirement = "redirects"                // MOVED/ASK/TRYAGAIN under slot migration never reach the caller
	RequirementResubSunsubscribe Requirement = "resubscribe-sunsubscribe" // a server sunsubscribe (slot moved) is recovered
	RequirementResubDisconnect   Requirement = "resubscribe-disconnect"   // a forced disconnect is recovered, with delivery
	RequirementResubFailover     Requirement = "resubscribe-failover"     // a killed primary's subscriptions reach the new owner within budget
	RequirementReplicaRepair     Requirement = "replica-repair"           // replica reads survive a replica kill and return after its repair
	RequirementDispatchHalt      Requirement = "dispatch-halt"            // a dead primary halts dispatch only within the pool budget
	RequirementCrossSlot         Requirement = "cross-slot"               // a cross-slot multi-key command is loud, never silently scattered
	RequirementProtocol          Requirement = "resp2-resp3"              // the requested protocol is negotiated and the pool works under it

	// The cluster surface a relay uses beyond single commands (row
	// client-surface): each judged on the library's own path and through impl.
	RequirementPipeline      Requirement = "pipeline"        // a pipeline across slots during a slot move and a failover: every reply is the key's own, every failure is per key and loud
	RequirementTransaction   Requirement = "transaction"     // MULTI/EXEC in one slot under MOVED/ASK/TRYAGAIN: all or nothing, never half applied or silently dropped
	RequirementRESP3Push     Requirement = "resp3-push"      // RESP3 pushes on a subscription connection: short and long channel names, confirmations on an idle connection, pushes between replies
	RequirementDialTimeout   Requirement = "dial-timeout"    // a node that accepts no connection (blackholed) bounds a call by the dial timeout, and routing moves on
	RequirementConnLeak      Requirement = "connection-leak" // connections on every node (CLIENT LIST) return to their level after churn, failovers and topology refreshes
	RequirementOlderTopology Requirement = "older-topology"  // the topology reply of a Redis 7 server (CLUSTER SLOTS) is routed on correctly
)

// RequirementInfo is the catalogue entry of one requirement: plain data.
type RequirementInfo struct {
	ID    Requirement `json:"id"`
	Title string      `json:"title"`
	// Spec cites the section the requirement comes from.
	Spec string `json:"spec"`
	// Row is the scorecard row whose runs assess it.
	Row RowID `json:"row"`
}

// Requirements is every client-facing requirement, in table order.
var Requirements = []RequirementInfo{
	{RequirementRedirects, "Redirects under migration", "000 §Conformance, Routing", RowRouting},
	{RequirementResubSunsubscribe, "Resubscribe after sunsubscribe", "000 §Failure Modes, fails to resubscribe", RowSubscriptions},
	{RequirementResubDisconnect, "Resubscribe after disconnect", "000 §Client Architecture, redis-rs#2242", RowSubscriptions},
	{RequirementResubFailover, "Resubscribe after failover", "000 §Conformance, Failure drills (both clients)", RowFailureDrills},
	{RequirementReplicaRepair, "Replica repair", "000 §Conformance, Failure drills (#2120 path)", RowFailureDrills},
	{RequirementDispatchHalt, "Dispatch halt", "000 §Client Architecture, dead primary halts dispatch", RowFailureDrills},
	{RequirementCrossSlot, "Cross-slot multi-key", "000 §Conformance, Locality contract; Presence MGET", RowPresenceMGet},
	{RequirementProtocol, "RESP2 / RESP3", "000 §Conformance, Protocol choice", RowProtocol},
	{RequirementPipeline, "Pipeline across slots", "000 §Conformance, Locality contract (explicit per-key pipeline); §Client Architecture", RowClientSurface},
	{RequirementTransaction, "MULTI/EXEC in one slot", "000 §Conformance, Routing (MOVED/ASK/TRYAGAIN); Locality contract", RowClientSurface},
	{RequirementRESP3Push, "RESP3 push handling", "000 §Sharded Pub/Sub Conversion; §Client Architecture (split subscription client)", RowClientSurface},
	{RequirementDialTimeout, "Dial timeout", "000 §Client Architecture, dead primary halts dispatch", RowClientSurface},
	{RequirementConnLeak, "Connection accounting", "000 §Client Architecture (command pool)", RowClientSurface},
	{RequirementOlderTopology, "Older topology reply", "000 §Client Architecture, version floor; Redis 7 CLUSTER SLOTS", RowClientSurface},
}

// AdmissionBackends are the client libraries every table lists, assessed or
// not (impl/client Backends; report does not import impl).
var AdmissionBackends = []string{"go-redis", "valkey-go"}

// AdmissionVerdict is the raw client's verdict on one requirement.
type AdmissionVerdict string

const (
	// Admitted: the raw client met the requirement on its own.
	Admitted AdmissionVerdict = "admitted"
	// AdmittedWithWrapper: the raw client failed it; impl's named wrapper
	// over the same client met it.
	AdmittedWithWrapper AdmissionVerdict = "wrapper"
	// Refused: the raw client failed it and no impl wrapper made it pass.
	Refused AdmissionVerdict = "refused"
	// NotAssessed: no run judged the raw client (or the run could not
	// decide). Never counts as admitted.
	NotAssessed AdmissionVerdict = "not-assessed"
)

// admissionRank orders verdicts worst first when runs disagree: one run
// that refused the client outweighs runs that admitted it.
func admissionRank(v AdmissionVerdict) int {
	switch v {
	case Refused:
		return 0
	case AdmittedWithWrapper:
		return 1
	case Admitted:
		return 2
	}
	return 3
}

// Admission is one recorded judgement of a raw client, recorded by a suite
// next to the check whose runs it reuses.
type Admission struct {
	Backend     string           `json:"backend"`
	Requirement Requirement      `json:"requirement"`
	Verdict     AdmissionVerdict `json:"verdict"`
	// Wrapper names impl's code that made the client pass (Verdict
	// wrapper), e.g. "impl/routing.Wrap".
	Wrapper string `json:"wrapper,omitempty"`
	// Evidence says what the raw client did in this run, and what the
	// wrapped path did, in a sentence or two.
	Evidence string `json:"evidence"`
	// Client is the client library and version ("go-redis v9.23.0").
	Client string `json:"client,omitempty"`
	// Path names the library code the raw run exercised ("go-redis
	// ClusterClient.Pipeline"), so an admission is never a statement about
	// a path nobody ran.
	Path     string `json:"path,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	Seed     int64  `json:"seed,omitempty"`
}

// AdmissionOf decides a verdict from two observations of one run: whether
// the raw client met the requirement, and whether impl's wrapper over the
// same client did. A wrapper that also failed refuses the client.
func AdmissionOf(rawMet, wrappedMet bool) AdmissionVerdict {
	switch {
	case rawMet:
		return Admitted
	case wrappedMet:
		return AdmittedWithWrapper
	}
	return Refused
}

// AdmissionRow is one (backend, requirement) of the admission table, folded
// from every entry recorded for it.
type AdmissionRow struct {
	Backend     string           `json:"backend"`
	Requirement Requirement      `json:"requirement"`
	Verdict     AdmissionVerdict `json:"verdict"`
	// Wrapper joins the wrappers named by the entries of the verdict.
	Wrapper string      `json:"wrapper,omitempty"`
	Entries []Admission `json:"entries,omitempty"`
}

// TrustedAdmissions returns the admissions one spec recorded, with every
// admitted or wrapper verdict downgraded to not assessed unless each check
// the same spec recorded has verdict pass: a raw client's pass (or the
// wrapped path's) on a run whose check is blind, inconclusive or failed
// rests on a run the gate does not trust (its fault unconfirmed, its
// controls not proving the checker can fail), so it admits nothing. A
// refusal stands: it only ever withholds admission.
func TrustedAdmissions(admitted []Admission, recorded []Check) []Admission {
	why := ""
	if len(recorded) == 0 {
		why = "no check was recorded in the same run"
	}
	for _, c := range recorded {
		if v := c.Verdict(); v != StatusPass {
			why = fmt.Sprintf("the same run's check %s/%s is %s (%s)", c.Row, c.Column, v, oneLine(c.Reason(), 160))
			break
		}
	}
	if why == "" {
		return admitted
	}
	out := slices.Clone(admitted)
	for i, a := range out {
		if a.Verdict != Admitted && a.Verdict != AdmittedWithWrapper {
			continue
		}
		out[i].Evidence = fmt.Sprintf("%s Recorded %s, not assessed: %s.", a.Evidence, a.Verdict, why)
		out[i].Verdict, out[i].Wrapper = NotAssessed, ""
	}
	return out
}

// AdmissionTable folds recorded entries into the full table: every backend
// of AdmissionBackends (plus any other an entry names) × every requirement,
// worst verdict first; a pair without an assessed entry is NotAssessed.
// Entries naming an unknown requirement are kept in their own rows after
// the catalogue's, so nothing recorded is dropped.
func AdmissionTable(entries []Admission) []AdmissionRow {
	backends := slices.Clone(AdmissionBackends)
	var reqs []Requirement
	for _, r := range Requirements {
		reqs = append(reqs, r.ID)
	}
	for _, e := range entries {
		if e.Backend != "" && !slices.Contains(backends, e.Backend) {
			backends = append(backends, e.Backend)
		}
		if !slices.Contains(reqs, e.Requirement) {
			reqs = append(reqs, e.Requirement)
		}
	}
	var rows []AdmissionRow
	for _, b := range backends {
		for _, req := range reqs {
			row := AdmissionRow{Backend: b, Requirement: req, Verdict: NotAssessed}
			for _, e := range entries {
				if e.Backend == b && e.Requirement == req {
					row.Entries = append(row.Entries, e)
				}
			}
			sort.SliceStable(row.Entries, func(i, j int) bool {
				a, c := row.Entries[i], row.Entries[j]
				if ra, rc := admissionRank(a.Verdict), admissionRank(c.Verdict); ra != rc {
					return ra < rc
				}
				return a.Scenario < c.Scenario
			})
			if len(row.Entries) > 0 && admissionRank(row.Entries[0].Verdict) < admissionRank(NotAssessed) {
				row.Verdict = row.Entries[0].Verdict
			}
			var wrappers []string
			for _, e := range row.Entries {
				if e.Verdict == row.Verdict && e.Wrapper != "" && !slices.Contains(wrappers, e.Wrapper) {
					wrappers = append(wrappers, e.Wrapper)
				}
			}
			row.Wrapper = strings.Join(wrappers, "; ")
			rows = append(rows, row)
		}
	}
	return rows
}

// admissionEntries flattens a table back into its recorded entries (a
// results file, a merge).
func admissionEntries(rows []AdmissionRow) []Admission {
	var out []Admission
	for _, r := range rows {
		out = append(out, r.Entries...)
	}
	return out
}

// AdmissionTally counts one backend's verdicts.
type AdmissionTally struct {
	Admitted, Wrapper, Refused, NotAssessed int
	// RefusedFor lists the requirements the backend was refused on.
	RefusedFor []Requirement
}

// AdmissionTallies counts each backend's verdicts, in table order.
func (s *Scorecard) AdmissionTallies() (backends []string, tallies map[string]*AdmissionTally) {
	tallies = map[string]*AdmissionTally{}
	for _, r := range s.Admission {
		t := tallies[r.Backend]
		if t == nil {
			t = &AdmissionTally{}
			tallies[r.Backend] = t
			backends = append(backends, r.Backend)
		}
		switch r.Verdict {
		case Admitted:
			t.Admitted++
		case AdmittedWithWrapper:
			t.Wrapper++
		case Refused:
			t.Refused++
			t.RefusedFor = append(t.RefusedFor, r.Requirement)
		default:
			t.NotAssessed++
		}
	}
	return backends, tallies
}

// requirementTitle is the catalogue title of id, or id itself.
func requirementTitle(id Requirement) string {
	for _, r := range Requirements {
		if r.ID == id {
			return r.Title
		}
	}
	return string(id)
}

// admissionLabel is a verdict as a reader says it.
func admissionLabel(v AdmissionVerdict) string {
	switch v {
	case Admitted:
		return "admitted"
	case AdmittedWithWrapper:
		return "with impl wrapper"
	case Refused:
		return "REFUSED"
	}
	return "not assessed"
}

// decodeAdmission recovers an Admission from a report entry's JSON value,
// filling Scenario and Seed from the spec.
func decodeAdmission(e GinkgoEntry, scenario string, seed int64) (Admission, error) {
	var a Admission
	if err := decodeValue(e, &a); err != nil {
		return Admission{}, err
	}
	if a.Scenario == "" {
		a.Scenario = scenario
	}
	if a.Seed == 0 {
		a.Seed = seed
	}
	if a.Verdict == "" {
		a.Verdict = NotAssessed
	}
	return a, nil
}
