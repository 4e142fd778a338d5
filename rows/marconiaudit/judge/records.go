// Package judge holds the Marconi audit-pipeline rows' records and pure
// checkers (spec 002 §3.6 the audit queue, §4 the Redis Stream writer and
// the PG archiver, §9 their counters and gauges): marconi-audit-completeness,
// marconi-loss-budget and marconi-stream share the one family folder
// rows/marconiaudit. A run's ledger (offers, stream, PostgreSQL rows, loss
// counters), its pipeline errors, samples and the stream's entries are
// judged here; the offers and stream entries are history's shared records
// (AuditOffer, StreamEntry). Each checker is defined under a stable name
// (check.Define), so a scenario's judgement replays offline (`slotgate check
// --from`); the aliases are the names earlier histories stored it under.
package judge

import (
	"time"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/history"
)

// AuditTable is one PostgreSQL table's rows, each rendered as the server's
// row text (t::text), keyed by primary key; a key can repeat when the table
// lost its unique key.
type AuditTable map[string][]string

// AuditError is one error a pipeline reported (its OnError hook), on the
// scenario clock.
type AuditError struct {
	At                        time.Duration
	Stage, Tenant, Op, Reason string
	Err                       string
}

// AuditSample is one scrape of a tenant's gauges (seconds; entries).
type AuditSample struct {
	At          time.Duration
	Tenant      string
	WriterLag   float64
	ArchiverLag float64
	Depth       float64
	// Backlog is appended − archived: stream entries not yet in PG.
	Backlog float64
}

// AuditCapHistory is one tenant queue offered fixed-size entries with no
// writer draining it: the configuration, each offer's answer, and the
// queue's state afterwards.
type AuditCapHistory struct {
	Name   string
	Policy string // AuditPolicyOldest or AuditPolicyRejectNew
	// MaxEntries and MaxBytes are the queue's caps; EntrySize the size
	// (audit.EntrySize) of every offered entry.
	MaxEntries int
	MaxBytes   int64
	EntrySize  int64
	// Kept is each offer's answer, in order.
	Kept []bool
	// Depth, Bytes and Dropped are the queue's state after the offers
	// (Stats: depth, bytes, every counted loss).
	Depth   int
	Bytes   int64
	Dropped int64
}

// ArchiverRead is one XREADGROUP the PG archiver sent, as recorded on its
// command pool: the command's words and how many entries its reply held.
type ArchiverRead struct {
	Cmd     []string
	Entries int
}

// ExactlyOnceRun is the ledgers of a fault-free run and the fewest accepted
// signals that make a verdict (ExactlyOnce).
type ExactlyOnceRun struct {
	Ledgers   []AuditLedger
	MinOffers int
}

// ShadowTables is the tables a Stage 4 run wrote, by name, and which
// shadow table each direct-write table is compared with (ShadowEqual).
type ShadowTables struct {
	Tables map[string]AuditTable
	Pairs  map[string]string
}

// ReadsRun is the archiver's reads at the client seam, the server's count
// of them, and the fewest entries read that make a verdict
// (ReadsOneAtATime).
type ReadsRun struct {
	Reads      []ArchiverRead
	Wire       WireReads
	MinEntries int
}

// ResumeRun is a writer-restart run: the offers, the stream in order, the
// restarts, and the fewest restarts that make a verdict (StreamResume).
type ResumeRun struct {
	Offers      []history.AuditOffer
	Stream      []history.StreamEntry
	Restarts    []WriterRestart
	MinRestarts int
}

// LagRun is the archiver-lag alert's samples and the alert's bound, the
// sampling tolerance and the grace a mismatch may last (LagAlert).
type LagRun struct {
	Samples []LagSample
	Bound   float64
	Tol     float64
	Grace   time.Duration
}

// KillRun is the archiver process's SIGKILLs and how many were planned
// (KillPremise).
type KillRun struct {
	Kills []ArchiverKill
	Want  int
}

// WakeRun is the archiver's reads of a mostly idle stream, the poll a
// non-woken archiver would wait, and the fewest idle-stream appends the
// median needs (ArchiverWakes).
type WakeRun struct {
	Reads   []WakeRead
	Poll    time.Duration
	MinIdle int
}

// AlertRun is the writer alerts' evaluations through an outage and each
// rule's bound (Alerts).
type AlertRun struct {
	Samples []AlertSample
	Bounds  map[string]AlertBound
}

// KillCount is a pipeline's archiver kills against its plan
// (ArchiverKilled).
type KillCount struct {
	Pipeline string
	Kills    int
	Planned  int
}

// NotRun names a check the topology cannot run and why (Unrunnable).
type NotRun struct {
	Checker string
	Why     string
}

// PaceRun is the writers behind at a stalled wait, the writer's batch and
// the least share of the stall a busy writer spends appending
// (WritersOutpaced).
type PaceRun struct {
	Paces   []AuditWriterPace
	Batch   int
	MinBusy float64
}

// The rows' checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order (a one-argument checker takes
// that argument itself), so histories stored under the old names replay.
var (
	ExactlyOnce = check.Define("marconi-audit/exactly-once", func(in ExactlyOnceRun) check.Result {
		return exactlyOnce(in.Ledgers, in.MinOffers)
	}, "MarconiExactlyOnce")
	LossBudget  = check.Define("marconi-audit/loss-budget", lossBudget, "MarconiLossBudget")
	ShadowEqual = check.Define("marconi-audit/shadow-equal", func(in ShadowTables) check.Result {
		return shadowEqual(in.Tables, in.Pairs)
	}, "MarconiShadowEqual")
	PipelineErrors  = check.Define("marconi-audit/pipeline-errors", pipelineErrors, "MarconiPipelineErrors")
	CapsExact       = check.Define("marconi-audit/caps-exact", capsExact, "AuditCapsExact")
	ReadsOneAtATime = check.Define("marconi-audit/reads-one-at-a-time", func(in ReadsRun) check.Result {
		return readsOneAtATime(in.Reads, in.Wire, in.MinEntries)
	}, "MarconiReadsOneAtATime")
	StreamResume = check.Define("marconi-audit/stream-resume", func(in ResumeRun) check.Result {
		return streamResume(in.Offers, in.Stream, in.Restarts, in.MinRestarts)
	}, "MarconiStreamResume")
	TrimKeepsUnconsumed = check.Define("marconi-audit/trim-keeps-unconsumed", trimKeepsUnconsumed, "MarconiTrimKeepsUnconsumed")
	LagAlert            = check.Define("marconi-audit/lag-alert", func(in LagRun) check.Result {
		return lagAlert(in.Samples, in.Bound, in.Tol, in.Grace)
	}, "MarconiLagAlert")
	KillPremise = check.Define("marconi-audit/kill-premise", func(in KillRun) check.Result {
		return killPremise(in.Kills, in.Want)
	}, "MarconiKillPremise")
	ArchiverWakes = check.Define("marconi-audit/archiver-wakes", func(in WakeRun) check.Result {
		return archiverWakes(in.Reads, in.Poll, in.MinIdle)
	}, "MarconiArchiverWakes")
	Alerts = check.Define("marconi-audit/alerts", func(in AlertRun) check.Result {
		return alerts(in.Samples, in.Bounds)
	}, "MarconiAuditAlerts")
	ArchiverKilled = check.Define("marconi-audit/archiver-killed", func(in KillCount) check.Result {
		return archiverKilled(in.Pipeline, in.Kills, in.Planned)
	}, "ArchiverKilled")
	Unrunnable = check.Define("marconi-audit/unrunnable", func(in NotRun) check.Result {
		return unrunnable(in.Checker, in.Why)
	}, "MarconiUnrunnable")
	WritersOutpaced = check.Define("marconi-audit/writers-outpaced", func(in PaceRun) check.Result {
		return writersOutpaced(in.Paces, in.Batch, in.MinBusy)
	}, "AuditWritersOutpaced")
	DoubleWriteSeen   = check.Define("marconi-audit/double-write-seen", doubleWriteSeen, "MarconiDoubleWriteSeen")
	StaleWriterFenced = check.Define("marconi-audit/stale-writer-fenced", staleWriterFenced, "MarconiStaleWriterFenced")
	LostReplyOnce     = check.Define("marconi-audit/lost-reply-once", lostReplyOnce, "MarconiLostReplyOnce")
)
