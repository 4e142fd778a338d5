package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/traffic/preflight"
)

const preflightHelp = `Usage: slotgate preflight --endpoint host:port [--endpoint ...] [flags]

The pre-G3 checklist (spec 000 §Deployment Gate rule 5; §Migration path G3–G5),
run READ-ONLY against a running cluster or standalone endpoint slotgate did not
start (staging, the compose/ topology, a configuration endpoint):

  topology             CLUSTER INFO/SHARDS: cluster_state ok, every slot ok, every node reachable
  keyslot-equality     CLUSTER KEYSLOT equality on real tagged pairs: the key rule's
                       (impl/fencing NewKeys), the live keyspace's, and any --pair
  crossslot-probe      A3: one EVAL on an un-tagged two-key pair must be refused (CROSSSLOT)
  key-size             G4: no item above --key-size-threshold (256 MB refuses slot migration),
                       by a full SCAN of EVERY primary and MEMORY USAGE per key
  cpu-headroom         G5: engine-thread CPU below --cpu-limit on every node (INFO cpu, twice)
  old-keyspace-leases  rule 3: observed old-keyspace lease count = 0 (SCAN of every primary)
  durability           T1/T2 across a failover: every primary has --min-replicas replicas online,
                       a cluster-node-timeout under the lease TTL minus the renew interval
                       (30 s - 10 s); min-replicas-to-write and persistence reported with what
                       they mean (replication is asynchronous: only the directory's
                       durability mode keeps an acknowledged lease across a failover)

Only PING, INFO, SCAN, CLUSTER INFO|SHARDS|KEYSLOT, MEMORY USAGE, CONFIG GET of
the durability settings and EVAL of a script that touches no key are sent;
anything else is refused before it leaves.
CPU is sampled first, so the key passes do not count against the headroom.
Every flag has an environment variable (flags win): SLOTGATE_ENDPOINT (comma
list), SLOTGATE_USER, SLOTGATE_PASSWORD, SLOTGATE_TLS, SLOTGATE_CACERT,
SLOTGATE_CERT, SLOTGATE_KEY, SLOTGATE_TLS_INSECURE. Prefer SLOTGATE_PASSWORD to
--password (a flag is visible in the process list).

Exit codes: 0 every selected item PASS · 1 any item FAIL or UNKNOWN (UNKNOWN is
not a pass: the checklist is not cleared) · 2 bad input or no endpoint reachable.

Flags:
`

// errNotCleared makes `slotgate preflight` exit 1: an item failed or could
// not decide.
var errNotCleared = errors.New("checklist not cleared")

// listFlag is a repeatable flag that also accepts comma lists; its first
// Set replaces the default (taken from the environment).
type listFlag struct {
	vals []string
	set  bool
}

func (l *listFlag) String() string { return strings.Join(l.vals, ",") }
func (l *listFlag) Set(v string) error {
	if !l.set {
		l.vals, l.set = nil, true
	}
	l.vals = append(l.vals, fixtures.SplitEndpoints(v)...)
	return nil
}

// sizeFlag is a byte count written as 256MB, 512KiB, 1GB or plain bytes
// (binary units: 256 MB = 256 MiB, the item limit as meant).
type sizeFlag int64

func (s *sizeFlag) String() string { return check.Bytes(int64(*s)) }
func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func parseSize(v string) (int64, error) {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 256MB, 512KB or a byte count)", v)
	}
	return n * mult, nil
}

type preflightFlags struct {
	ext          fixtures.External
	endpoints    listFlag
	pairs        listFlag
	items        listFlag
	asJSON       bool
	threshold    sizeFlag
	samples      int
	maxKeys      int
	scanCount    int
	cpuInterval  time.Duration
	cpuLimit     float64
	minReplicas  int
	keyspacePair int
	timeout      time.Duration
}

func cmdPreflight(args []string, stdout, stderr io.Writer) error {
	env, envErr := fixtures.ExternalFromEnv()
	f := preflightFlags{ext: env, endpoints: listFlag{vals: env.Endpoints}, threshold: 256 << 20}
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&f.endpoints, "endpoint", "`host:port` of a cluster node / configuration endpoint, or a standalone node; repeatable or comma list (env SLOTGATE_ENDPOINT)")
	fs.StringVar(&f.ext.Username, "user", env.Username, "ACL user (env SLOTGATE_USER)")
	fs.StringVar(&f.ext.Password, "password", env.Password, "password (env SLOTGATE_PASSWORD, preferred)")
	fs.BoolVar(&f.ext.TLS, "tls", env.TLS, "connect with TLS (env SLOTGATE_TLS)")
	fs.StringVar(&f.ext.CACert, "cacert", env.CACert, "CA certificate `file` to verify the server (env SLOTGATE_CACERT; default system roots)")
	fs.StringVar(&f.ext.Cert, "cert", env.Cert, "client certificate `file` for mutual TLS (env SLOTGATE_CERT)")
	fs.StringVar(&f.ext.Key, "key", env.Key, "client key `file` for mutual TLS (env SLOTGATE_KEY)")
	fs.BoolVar(&f.ext.InsecureSkipVerify, "insecure-skip-verify", env.InsecureSkipVerify, "do not verify the server certificate — test targets only (env SLOTGATE_TLS_INSECURE)")
	fs.BoolVar(&f.asJSON, "json", false, "print the checklist as JSON")
	fs.Var(&f.items, "checks", "comma `list` of items to run (default all): "+itemNames())
	fs.Var(&f.threshold, "key-size-threshold", "item `size` above which a slot refuses to migrate (G4)")
	fs.IntVar(&f.samples, "memory-samples", 5, "MEMORY USAGE SAMPLES per aggregate key; 0 = every element (exact, slow)")
	fs.IntVar(&f.maxKeys, "max-keys", 0, "stop each node's key-size pass after `n` keys (0 = the whole keyspace; a stopped pass is UNKNOWN)")
	fs.IntVar(&f.scanCount, "scan-count", 1000, "SCAN COUNT hint")
	fs.DurationVar(&f.cpuInterval, "cpu-interval", 5*time.Second, "time between the two INFO cpu reads")
	fs.Float64Var(&f.cpuLimit, "cpu-limit", 80, "engine CPU `percent` at or above which resharding is unsafe (G5)")
	fs.IntVar(&f.minReplicas, "min-replicas", 1, "replicas each primary must have online (durability)")
	fs.Var(&f.pairs, "pair", "an extra tagged pair `keyA,keyB` whose slots must be equal; repeatable")
	fs.IntVar(&f.keyspacePair, "keyspace-pairs", 100, "at most this many real pairs sampled from the live keyspace")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Minute, "give up after this long")
	fs.Usage = func() { fmt.Fprint(stderr, preflightHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate preflight --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (see slotgate preflight --help)", errUsage, fs.Arg(0))
	}
	if envErr != nil {
		return fmt.Errorf("%w: %v", errUsage, envErr)
	}
	opts, err := f.options()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	obs, err := preflight.Gather(ctx, opts)
	if errors.Is(err, preflight.ErrUnreachable) {
		return fmt.Errorf("%w: %v (is the endpoint up, and are --tls and the credentials right?)", errUsage, err)
	}
	if err != nil {
		return err
	}
	items := judge(obs, f.cpuLimit/100, f.minReplicas)
	if f.asJSON {
		if err := writePreflightJSON(stdout, obs, items); err != nil {
			return err
		}
	} else {
		writePreflightText(stdout, obs, items)
	}
	if n := notCleared(items); n > 0 {
		return fmt.Errorf("%w: %d item(s) not PASS", errNotCleared, n)
	}
	return nil
}

// options validates the flags into gatherer options; errors are usage.
func (f *preflightFlags) options() (preflight.Options, error) {
	bad := func(err error) (preflight.Options, error) {
		return preflight.Options{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	f.ext.Endpoints = f.endpoints.vals
	if len(f.ext.Endpoints) == 0 {
		return bad(fmt.Errorf("no endpoint: pass --endpoint host:port or set %s", fixtures.EnvEndpoint))
	}
	if err := f.ext.Validate(); err != nil {
		return bad(err)
	}
	tlsCfg, err := f.ext.TLSConfig()
	if err != nil {
		return bad(err)
	}
	items, err := preflight.ParseItems(f.items.vals)
	if err != nil {
		return bad(err)
	}
	var pairs [][2]string
	if len(f.pairs.vals)%2 != 0 {
		return bad(fmt.Errorf("--pair takes two keys, keyA,keyB"))
	}
	for i := 0; i < len(f.pairs.vals); i += 2 {
		pairs = append(pairs, [2]string{f.pairs.vals[i], f.pairs.vals[i+1]})
	}
	switch {
	case f.samples < 0:
		return bad(fmt.Errorf("--memory-samples must be >= 0"))
	case f.maxKeys < 0:
		return bad(fmt.Errorf("--max-keys must be >= 0"))
	case f.scanCount <= 0:
		return bad(fmt.Errorf("--scan-count must be > 0"))
	case f.cpuInterval < 100*time.Millisecond:
		return bad(fmt.Errorf("--cpu-interval %v is too short to measure (>= 100ms)", f.cpuInterval))
	case f.cpuLimit <= 0 || f.cpuLimit > 100:
		return bad(fmt.Errorf("--cpu-limit must be a percent in (0, 100]"))
	case f.minReplicas < 0:
		return bad(fmt.Errorf("--min-replicas must be >= 0"))
	case f.keyspacePair <= 0:
		return bad(fmt.Errorf("--keyspace-pairs must be > 0"))
	case f.timeout <= 0:
		return bad(fmt.Errorf("--timeout must be > 0"))
	}
	return preflight.Options{
		Endpoints: f.ext.Endpoints, Username: f.ext.Username, Password: f.ext.Password, TLS: tlsCfg,
		Items: items, KeySizeThreshold: int64(f.threshold), MemorySamples: f.samples, ScanCount: f.scanCount,
		MaxKeys: f.maxKeys, CPUInterval: f.cpuInterval, KeyspacePairs: f.keyspacePair, Pairs: pairs,
	}, nil
}

func itemNames() string {
	names := make([]string, len(preflight.Items))
	for i, it := range preflight.Items {
		names[i] = string(it)
	}
	return strings.Join(names, ",")
}

// preflightItem is one checklist line: the verdict and what to do about it.
type preflightItem struct {
	ID             preflight.Item `json:"id"`
	Spec           string         `json:"spec"`
	Status         string         `json:"status"` // PASS, FAIL, UNKNOWN, SKIPPED
	Message        string         `json:"message"`
	Evidence       []string       `json:"evidence,omitempty"`
	Counterexample string         `json:"counterexample,omitempty"`
	Do             string         `json:"do,omitempty"`
}

// itemSpec is each item's spec citation and the operator's next step when
// it fails or cannot decide.
var itemSpec = map[preflight.Item]struct{ spec, onFail, onUnknown string }{
	preflight.ItemTopology: {"000 §Conformance (real multi-shard cluster)",
		"repair the cluster (cluster_state must be ok with all 16384 slots served) before any door",
		"make every node reachable from here (announced addresses, TLS port, credentials) and re-run"},
	preflight.ItemKeyslot: {"000 §Deployment Gate rule 5; §Migration path G3",
		"fix the key rule so both members carry the same {hash tag}, migrate the mis-tagged keys, and do not enter compatible until this passes",
		"make CLUSTER KEYSLOT answer (permissions) or name pairs with --pair, then re-run"},
	preflight.ItemCrossSlot: {"000 §Axioms A3; §Migration path G3",
		"this endpoint does not enforce slot rules: do not treat its green as evidence for enabled; run the conformance rows against a real multi-shard cluster",
		"run the probe against the compatible-mode (configuration) endpoint; in disabled mode slot rules are never enforced"},
	preflight.ItemKeySize: {"000 §Migration path G4; §Failure Modes (>256MB items refuse slot migration)",
		"split or shrink the listed keys before G4: their slots cannot migrate (silent, permanent imbalance)",
		"let the pass visit every primary to completion (reachability, --max-keys 0) and re-run"},
	preflight.ItemCPU: {"000 §Migration path G5 (<80% CPU during resharding)",
		"do not reshard now: shed load or wait for off-peak until every engine thread is below the limit",
		"make INFO cpu readable on every node and re-run"},
	preflight.ItemOldLeases: {"000 §Deployment Gate rule 3; §Migration path G3 (fleet fully on C)",
		"the fleet is not fully on C: finish the C rollout and wait for the old-keyspace leases to drain (observed, not timed)",
		"let the lease count visit every primary to completion and re-run"},
	preflight.ItemDurability: {"000 §Safety theorems T1, T2; §Problem Statement (primary + replica, automatic failover)",
		"give every primary a replica online and a cluster-node-timeout under the lease TTL minus the renew interval before any door; run the fencing directory in its durability mode",
		"make INFO replication readable on every primary and re-run"},
}

// specLeaseTTL and specRenew are production's lease TTL and renew interval
// (spec 000 §The Fencing Migration: reliable.rs, audio/join.rs).
const (
	specLeaseTTL = 30 * time.Second
	specRenew    = 10 * time.Second
)

// judge runs each gathered item's checker over the observations.
func judge(obs *preflight.Observations, cpuLimit float64, minReplicas int) []preflightItem {
	gathered := map[preflight.Item]bool{}
	for _, it := range obs.Gathered {
		gathered[it] = true
	}
	var out []preflightItem
	for _, it := range preflight.Items {
		meta := itemSpec[it]
		item := preflightItem{ID: it, Spec: meta.spec}
		if !gathered[it] {
			item.Status, item.Message = "SKIPPED", "not selected (--checks)"
			out = append(out, item)
			continue
		}
		var r check.Result
		switch it {
		case preflight.ItemTopology:
			r = check.PreflightTopologyHealthy(obs.Topology)
		case preflight.ItemKeyslot:
			r = check.KeyslotEquality(obs.Pairs)
		case preflight.ItemCrossSlot:
			r = check.CrossSlotRefused(*obs.Probe)
		case preflight.ItemKeySize:
			r = check.KeySizesUnder(*obs.KeySizes)
		case preflight.ItemCPU:
			r = check.CPUHeadroom(obs.CPU, cpuLimit)
		case preflight.ItemOldLeases:
			r = check.OldLeasesDrained(*obs.Leases)
		case preflight.ItemDurability:
			r = check.DurabilityReady(obs.Durability, check.DurabilityWant{MinReplicas: minReplicas, LeaseTTL: specLeaseTTL, Renew: specRenew})
		}
		item.Status = strings.ToUpper(string(r.Status))
		item.Message, item.Evidence, item.Counterexample = r.Message, r.Observed, r.Counterexample
		switch r.Status {
		case check.Fail:
			item.Do = meta.onFail
		case check.Unknown:
			item.Do = meta.onUnknown
		}
		out = append(out, item)
	}
	return out
}

func notCleared(items []preflightItem) int {
	n := 0
	for _, it := range items {
		if it.Status == "FAIL" || it.Status == "UNKNOWN" {
			n++
		}
	}
	return n
}

func describeTopology(t check.PreflightTopology) string {
	if !t.Cluster {
		return fmt.Sprintf("standalone (cluster support disabled), %d node(s)", len(t.Nodes))
	}
	p := 0
	for _, n := range t.Nodes {
		if n.Primary {
			p++
		}
	}
	return fmt.Sprintf("cluster, %d primaries + %d replicas", p, len(t.Nodes)-p)
}

func writePreflightText(w io.Writer, obs *preflight.Observations, items []preflightItem) {
	fmt.Fprintln(w, "slotgate preflight — pre-G3 checklist (spec 000 §Deployment Gate rule 5; §Migration path G3–G5), read-only")
	fmt.Fprintf(w, "endpoint %s · %s · %s · gathered in %v\n\n", obs.Seed, obs.Server, describeTopology(obs.Topology), obs.Took.Round(time.Millisecond))
	counts := map[string]int{}
	for _, it := range items {
		counts[it.Status]++
		fmt.Fprintf(w, "  %-8s %-20s %s\n", it.Status, it.ID, it.Message)
		for _, e := range it.Evidence {
			fmt.Fprintf(w, "  %-8s %-20s · %s\n", "", "", e)
		}
		if it.Counterexample != "" {
			for _, line := range strings.Split(it.Counterexample, "\n") {
				fmt.Fprintf(w, "  %-8s %-20s   %s\n", "", "", line)
			}
		}
		if it.Do != "" {
			fmt.Fprintf(w, "  %-8s %-20s → do: %s\n", "", "", it.Do)
		}
	}
	verdict := "CLEARED"
	if notCleared(items) > 0 {
		verdict = "NOT CLEARED"
	}
	fmt.Fprintf(w, "\npreflight: %s — %d pass, %d fail, %d unknown, %d skipped\n", verdict, counts["PASS"], counts["FAIL"], counts["UNKNOWN"], counts["SKIPPED"])
}

func writePreflightJSON(w io.Writer, obs *preflight.Observations, items []preflightItem) error {
	out := struct {
		Endpoint string          `json:"endpoint"`
		Server   string          `json:"server"`
		Topology string          `json:"topology"`
		TookMS   int64           `json:"took_ms"`
		Cleared  bool            `json:"cleared"`
		Items    []preflightItem `json:"items"`
	}{obs.Seed, obs.Server, describeTopology(obs.Topology), obs.Took.Milliseconds(), notCleared(items) == 0, items}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}
