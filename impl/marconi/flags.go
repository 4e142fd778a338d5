package marconi

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Flags are the fine-grain MARCONI_* feature flags of spec 002 §8. Every
// flag defaults to OFF, as the spec defaults them: the zero Flags is the
// Stage 1 mesh (routing and registration read from the SessionStore in
// Redis, no audit queue, the legacy send path). ShippedFlags is the Stage 5
// "status: shipped" set. A running mesh changes them with SetFlags (§8
// "flags flip traffic. Rollback per flag").
type Flags struct {
	// RoutingTableReads: MARCONI_ROUTING_TABLE_READS (Stage 1, flipped ON
	// after Stage 2) — read routing from the process-local table; OFF reads
	// the SessionStore (Store.Route: Redis on the send path).
	RoutingTableReads bool
	// RegistrationTableReads: MARCONI_REGISTRATION_TABLE_READS — the
	// session-id-keyed sister (§3.2); OFF confirms the resolved session
	// against the SessionStore (Store.Live) on every send.
	RegistrationTableReads bool
	// AuditQueueWrite: MARCONI_AUDIT_QUEUE_WRITE (Stage 3) — send_signal
	// offers every accepted envelope to the audit Sink.
	AuditQueueWrite bool
	// RedisStreamWriter: MARCONI_REDIS_STREAM_WRITER (Stage 3). Read by
	// whoever runs the audit workers; the mesh only carries it.
	RedisStreamWriter bool
	// PGArchiverShadow: MARCONI_PG_ARCHIVER_SHADOW (Stage 4); carried.
	PGArchiverShadow bool
	// PGArchiverPrimary: MARCONI_PG_ARCHIVER_PRIMARY (Stage 4); carried.
	PGArchiverPrimary bool
	// HotPathSend: MARCONI_HOT_PATH_SEND (Stage 5) — direct push from the
	// routing table. OFF is the legacy §2.2 path: the send also PUBLISHes
	// the envelope on the session's Redis channel before its 200.
	HotPathSend bool
	// ObligationsMemoryPrimary: MARCONI_OBLIGATIONS_MEMORY_PRIMARY (Stage 5)
	// — new obligations are tracked in the in-memory index with SLA
	// sweepers. Turning it off opens no new ones; open ones stay ackable.
	ObligationsMemoryPrimary bool
	// Verbs holds the per-verb MARCONI_VERB_<VERB> flags (Stage 5), keyed
	// by the upper-case verb; carried for the API layer.
	Verbs map[string]bool
	// CrossInstanceForward: MARCONI_CROSS_INSTANCE_FORWARD — reserved for a
	// later revision (§2.3); refused.
	CrossInstanceForward bool
	// Expiry is where on_session_expired comes from: MARCONI_SESSION_EXPIRY
	// (ours, not the spec's — see ExpiryMode). Empty is the default: the
	// keyspace listener when Options.Notify is set, else the sweeper.
	Expiry ExpiryMode
}

// ExpiryMode is the source of on_session_expired (spec 002 §5
// KeyspaceReaper). The spec contradicts itself here: §5 and the Stage 2
// hook list feed on_session_expired from Redis TTL expiry ("KeyspaceReaper"
// — keyspace notifications: SUBSCRIBE plus CONFIG SET notify-keyspace-events
// on every node), while Stage 2 says "No pubsub subscriber anywhere" and §5
// "zero pubsub round-trips". This implementation resolves it for the
// Stage 2 text: the default is the sweeper — no subscriber, no CONFIG SET —
// and the keyspace listener is an option (Options.Notify).
type ExpiryMode string

const (
	// ExpirySweeper (default): every SweepEvery the mesh looks for
	// registrations past their TTL in its table (the same instant the
	// board already stops routing to them), confirms each against the
	// SessionStore's scored index and record (a heartbeat through another
	// path moved its score: refresh, not expire) and calls
	// on_session_expired. No I/O unless a session is past its TTL; never a
	// subscriber.
	ExpirySweeper ExpiryMode = "sweeper"
	// ExpiryKeyspace: the keyspace-notification listener of notify.go on
	// every primary (Options.Notify required).
	ExpiryKeyspace ExpiryMode = "keyspace"
	// ExpiryOff: no on_session_expired at all. The Stage 2 hook list is
	// then incomplete, so the table-read flags are refused (FlagRules).
	ExpiryOff ExpiryMode = "off"
)

// ShippedFlags is the Stage 5 shipped configuration (§8 Stage 5: hot path
// send and archiver primary on, no synchronous PG write in send_signal),
// with the Stage 3 audit fan-out it stands on.
func ShippedFlags() Flags {
	return Flags{
		RoutingTableReads: true, RegistrationTableReads: true,
		AuditQueueWrite: true, RedisStreamWriter: true,
		PGArchiverPrimary: true, HotPathSend: true, ObligationsMemoryPrimary: true,
	}
}

// ErrBadFlags wraps a flag combination the mesh refuses (at New and at
// SetFlags); errors.As to *FlagError names the rule.
var ErrBadFlags = errors.New("bad marconi flags")

// FlagRule is one combination spec 002 forbids: plain data, so the CLI,
// the report and the suites list the same rules.
type FlagRule struct {
	// Name is the rule's id, named in every refusal.
	Name string `json:"name"`
	// Spec cites the clause the rule comes from.
	Spec string `json:"spec"`
	// Text says what is refused and why.
	Text   string `json:"text"`
	broken func(Flags) bool
}

// Rule names.
const (
	RuleStage5NeedsArchiverPrimary = "stage5-needs-archiver-primary"
	RuleStage5NeedsAuditPipeline   = "stage5-needs-audit-pipeline"
	RuleTableReadsNeedStage2Hooks  = "table-reads-need-stage2-hooks"
	RuleArchiverShadowXorPrimary   = "archiver-shadow-xor-primary"
	RuleCrossInstanceReserved      = "cross-instance-forward-reserved"
	RuleSessionExpiryKnown         = "session-expiry-known"
)

func (f Flags) anyVerb() bool {
	for _, on := range f.Verbs {
		if on {
			return true
		}
	}
	return false
}

// FlagRules are the combinations spec 002 forbids, each with its clause.
var FlagRules = []FlagRule{
	{Name: RuleStage5NeedsArchiverPrimary, Spec: "002 §8 Stage 5",
		Text: "a Stage 5 flag (MARCONI_HOT_PATH_SEND, MARCONI_OBLIGATIONS_MEMORY_PRIMARY, MARCONI_VERB_*) is on while MARCONI_PG_ARCHIVER_PRIMARY is off: \"Stage 5 cannot ship until Stage 4 archiver is primary — otherwise accepted signals would be delivered but not recorded\"",
		broken: func(f Flags) bool {
			return (f.HotPathSend || f.ObligationsMemoryPrimary || f.anyVerb()) && !f.PGArchiverPrimary
		}},
	{Name: RuleStage5NeedsAuditPipeline, Spec: "002 §8 Stage 3",
		Text:   "MARCONI_HOT_PATH_SEND is on while MARCONI_AUDIT_QUEUE_WRITE or MARCONI_REDIS_STREAM_WRITER is off: the hot-path cutover removes the legacy PG write, which \"cannot [be removed] until the new audit pipeline is proven downstream-equivalent\" — without it accepted signals reach no audit",
		broken: func(f Flags) bool { return f.HotPathSend && (!f.AuditQueueWrite || !f.RedisStreamWriter) }},
	{Name: RuleTableReadsNeedStage2Hooks, Spec: "002 §8 Stage 2",
		Text:   "MARCONI_ROUTING_TABLE_READS or MARCONI_REGISTRATION_TABLE_READS is on without every Stage 2 hook wired (MARCONI_SESSION_EXPIRY=off leaves on_session_expired unwired): the hooks are \"Required before MARCONI_ROUTING_TABLE_READS / MARCONI_REGISTRATION_TABLE_READS flips ON\" and the hook list \"must all exist\"",
		broken: func(f Flags) bool { return (f.RoutingTableReads || f.RegistrationTableReads) && f.Expiry == ExpiryOff }},
	{Name: RuleArchiverShadowXorPrimary, Spec: "002 §8 Stage 4",
		Text:   "MARCONI_PG_ARCHIVER_SHADOW and MARCONI_PG_ARCHIVER_PRIMARY are both on: shadow mode writes the *_shadow tables \"for byte-for-byte comparison against the legacy synchronous PG path\"; primary makes the archiver \"the only writer to canonical PG signal tables\" and that legacy write redundant — the archiver is in one mode, flipped from shadow to primary",
		broken: func(f Flags) bool { return f.PGArchiverShadow && f.PGArchiverPrimary }},
	{Name: RuleCrossInstanceReserved, Spec: "002 §2.3",
		Text:   "MARCONI_CROSS_INSTANCE_FORWARD is on: it \"remains reserved for a later revision\"",
		broken: func(f Flags) bool { return f.CrossInstanceForward }},
	{Name: RuleSessionExpiryKnown, Spec: "002 §5 (our MARCONI_SESSION_EXPIRY)",
		Text: "MARCONI_SESSION_EXPIRY is not one of sweeper, keyspace, off",
		broken: func(f Flags) bool {
			switch f.Expiry {
			case "", ExpirySweeper, ExpiryKeyspace, ExpiryOff:
				return false
			}
			return true
		}},
}

// FlagError is a refused combination: the rule it breaks.
type FlagError struct {
	Rule  FlagRule
	Flags Flags
}

func (e *FlagError) Error() string {
	return fmt.Sprintf("%v: rule %s (%s): %s [flags: %s]", ErrBadFlags, e.Rule.Name, e.Rule.Spec, e.Rule.Text, e.Flags)
}

// Unwrap makes errors.Is(err, ErrBadFlags) hold.
func (e *FlagError) Unwrap() error { return ErrBadFlags }

// Broken lists the names of every rule f breaks (none: f is allowed).
func (f Flags) Broken() []string {
	var out []string
	for _, r := range FlagRules {
		if r.broken(f) {
			out = append(out, r.Name)
		}
	}
	return out
}

// Validate refuses a combination spec 002 forbids, naming the first rule
// it breaks (FlagRules order).
func (f Flags) Validate() error {
	for _, r := range FlagRules {
		if r.broken(f) {
			return &FlagError{Rule: r, Flags: f}
		}
	}
	return nil
}

// String lists the flags that are on, by their environment names.
func (f Flags) String() string {
	var on []string
	for name, v := range map[string]bool{
		"MARCONI_ROUTING_TABLE_READS": f.RoutingTableReads, "MARCONI_REGISTRATION_TABLE_READS": f.RegistrationTableReads,
		"MARCONI_AUDIT_QUEUE_WRITE": f.AuditQueueWrite, "MARCONI_REDIS_STREAM_WRITER": f.RedisStreamWriter,
		"MARCONI_PG_ARCHIVER_SHADOW": f.PGArchiverShadow, "MARCONI_PG_ARCHIVER_PRIMARY": f.PGArchiverPrimary,
		"MARCONI_HOT_PATH_SEND": f.HotPathSend, "MARCONI_OBLIGATIONS_MEMORY_PRIMARY": f.ObligationsMemoryPrimary,
		"MARCONI_CROSS_INSTANCE_FORWARD": f.CrossInstanceForward,
	} {
		if v {
			on = append(on, name)
		}
	}
	for verb, v := range f.Verbs {
		if v {
			on = append(on, "MARCONI_VERB_"+verb)
		}
	}
	sort.Strings(on)
	if f.Expiry != "" {
		on = append(on, "MARCONI_SESSION_EXPIRY="+string(f.Expiry))
	}
	if len(on) == 0 {
		return "all off"
	}
	return strings.Join(on, ",")
}

// FlagsFromEnv reads the MARCONI_* flags through getenv (os.Getenv in
// production, a map in tests). "1", "true", "on" and "yes" are ON; anything
// else, or unset, is OFF, as §8 defaults every flag.
func FlagsFromEnv(getenv func(string) string, environ []string) Flags {
	return FlagsFromEnvAs(getenv, environ, MutantNone)
}

// FlagsFromEnvAs is FlagsFromEnv with a known-bad reader selected
// (MutantFlagDefaultOn; negative controls only).
func FlagsFromEnvAs(getenv func(string) string, environ []string, mutant Mutant) Flags {
	on := func(name string) bool {
		v := strings.ToLower(strings.TrimSpace(getenv(name)))
		if v == "" && mutant == MutantFlagDefaultOn && name == "MARCONI_ROUTING_TABLE_READS" {
			return true
		}
		switch v {
		case "1", "true", "on", "yes":
			return true
		}
		return false
	}
	f := Flags{
		RoutingTableReads:        on("MARCONI_ROUTING_TABLE_READS"),
		RegistrationTableReads:   on("MARCONI_REGISTRATION_TABLE_READS"),
		AuditQueueWrite:          on("MARCONI_AUDIT_QUEUE_WRITE"),
		RedisStreamWriter:        on("MARCONI_REDIS_STREAM_WRITER"),
		PGArchiverShadow:         on("MARCONI_PG_ARCHIVER_SHADOW"),
		PGArchiverPrimary:        on("MARCONI_PG_ARCHIVER_PRIMARY"),
		HotPathSend:              on("MARCONI_HOT_PATH_SEND"),
		ObligationsMemoryPrimary: on("MARCONI_OBLIGATIONS_MEMORY_PRIMARY"),
		CrossInstanceForward:     on("MARCONI_CROSS_INSTANCE_FORWARD"),
		Expiry:                   ExpiryMode(strings.ToLower(strings.TrimSpace(getenv("MARCONI_SESSION_EXPIRY")))),
	}
	const verbPrefix = "MARCONI_VERB_"
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if verb, ok := strings.CutPrefix(name, verbPrefix); ok && verb != "" {
			if f.Verbs == nil {
				f.Verbs = map[string]bool{}
			}
			f.Verbs[strings.ToUpper(verb)] = on(name)
		}
	}
	return f
}

// HasEnv reports whether any MARCONI_* variable is set in environ.
func HasEnv(environ []string) bool {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "MARCONI_") {
			return true
		}
	}
	return false
}

// StageStep is one state of the §8 rollout: a name and the flags after it.
type StageStep struct {
	Name  string `json:"name"`
	Flags Flags  `json:"flags"`
}

// StageWalk is the §8 rollout forward, one flag per step, from Stage 1
// (all off) to the shipped Stage 5 plus a per-verb flag; every step is
// allowed by FlagRules. Rollback walks it backwards ("Rollback per flag"):
// the Stage 4 flip is one step (shadow off and primary on together), since
// the two modes are exclusive.
func StageWalk() []StageStep {
	var out []StageStep
	f := Flags{}
	step := func(name string, edit func(*Flags)) {
		edit(&f)
		g := f
		if f.Verbs != nil {
			g.Verbs = map[string]bool{}
			for k, v := range f.Verbs {
				g.Verbs[k] = v
			}
		}
		out = append(out, StageStep{Name: name, Flags: g})
	}
	step("stage-1 (all off: SessionStore reads)", func(*Flags) {})
	step("stage-2 exit: MARCONI_ROUTING_TABLE_READS", func(f *Flags) { f.RoutingTableReads = true })
	step("stage-2 exit: MARCONI_REGISTRATION_TABLE_READS", func(f *Flags) { f.RegistrationTableReads = true })
	step("stage-3: MARCONI_REDIS_STREAM_WRITER", func(f *Flags) { f.RedisStreamWriter = true })
	step("stage-3: MARCONI_AUDIT_QUEUE_WRITE", func(f *Flags) { f.AuditQueueWrite = true })
	step("stage-4: MARCONI_PG_ARCHIVER_SHADOW", func(f *Flags) { f.PGArchiverShadow = true })
	step("stage-4: MARCONI_PG_ARCHIVER_PRIMARY (shadow off)", func(f *Flags) { f.PGArchiverShadow, f.PGArchiverPrimary = false, true })
	step("stage-5: MARCONI_OBLIGATIONS_MEMORY_PRIMARY", func(f *Flags) { f.ObligationsMemoryPrimary = true })
	step("stage-5: MARCONI_HOT_PATH_SEND", func(f *Flags) { f.HotPathSend = true })
	step("stage-5: MARCONI_VERB_SIGNAL", func(f *Flags) { f.Verbs = map[string]bool{"SIGNAL": true} })
	return out
}

// ForbiddenExamples maps each FlagRules name to a combination that breaks
// it and no earlier rule, so a refusal can be checked to name that rule:
// the CLI, the unit tests and the stage-flags row try the same ones.
func ForbiddenExamples() map[string]Flags {
	with := func(edit func(*Flags)) Flags {
		f := ShippedFlags()
		edit(&f)
		return f
	}
	return map[string]Flags{
		RuleStage5NeedsArchiverPrimary: with(func(f *Flags) { f.PGArchiverPrimary = false }),
		RuleStage5NeedsAuditPipeline:   with(func(f *Flags) { f.RedisStreamWriter = false }),
		RuleTableReadsNeedStage2Hooks:  {RoutingTableReads: true, RegistrationTableReads: true, Expiry: ExpiryOff},
		RuleArchiverShadowXorPrimary:   with(func(f *Flags) { f.PGArchiverShadow = true }),
		RuleCrossInstanceReserved:      with(func(f *Flags) { f.CrossInstanceForward = true }),
		RuleSessionExpiryKnown:         {Expiry: "cron"},
	}
}
