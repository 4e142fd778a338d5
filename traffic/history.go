package traffic

import (
	"context"
	"errors"
	"time"

	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
)

// Outcome classifies what a caller learned from err: ok; failed when the
// server answered with an error or the client library refused before
// sending (nothing was applied); unknown for anything else — a timeout, a
// dropped connection — after which the command may or may not have run.
func Outcome(err error) history.Outcome {
	switch {
	case err == nil:
		return history.OK
	case client.IsRefused(err):
		return history.Failed
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return history.Unknown
	}
	if k := ErrKind(err); k != "network" && k != "" {
		return history.Failed
	}
	return history.Unknown
}

// opRecord is one operation as every workload records it into the
// scenario's history (history.From(ctx)), beside its own typed record.
type opRecord struct {
	client, backend, kind string
	slot                  int
	start, end            time.Duration
}

// RecordOp records one operation of a row's own workload into ctx's
// history, as the workloads here do: the client, the kind, the slot (-1 for
// none), its call and return on the scenario clock, and err's outcome.
func RecordOp(ctx context.Context, client, kind string, slot int, call, ret time.Duration, err error) {
	recordOp(ctx, opRecord{client: client, kind: kind, slot: slot, start: call, end: ret}, err)
}

// RecordPoolOp is RecordOp for an operation made through p: the history
// also names p's client library as the operation's backend.
func RecordPoolOp(ctx context.Context, p client.Pool, who, kind string, slot int, call, ret time.Duration, err error) {
	recordOp(ctx, opRecord{client: who, backend: backendOf(p), kind: kind, slot: slot, start: call, end: ret}, err)
}

// recordOp records o with err's outcome into ctx's history (a no-op
// outside a recorded scenario).
func recordOp(ctx context.Context, o opRecord, err error) {
	rec := history.From(ctx)
	if rec == nil {
		return
	}
	op := history.Op{Start: o.start, End: o.end, Client: o.client, Backend: o.backend, Slot: o.slot, Kind: o.kind, Outcome: Outcome(err)}
	if err != nil {
		op.ErrKind, op.Err = ErrKind(err), err.Error()
	}
	rec.Op(op)
}

// backendOf names p's client library ("" for none).
func backendOf(p client.Pool) string {
	if p == nil {
		return ""
	}
	return string(p.Backend())
}

// outcomeOfKind is Outcome for a recorded error kind (ErrKind's).
func outcomeOfKind(kind string) history.Outcome {
	switch kind {
	case "":
		return history.OK
	case "network":
		return history.Unknown
	}
	return history.Failed
}

// recordFencing records one directory operation into ctx's history.
func recordFencing(ctx context.Context, client string, kind string, start, end time.Duration, err error) {
	recordOp(ctx, opRecord{client: client, kind: kind, slot: -1, start: start, end: end}, err)
}
