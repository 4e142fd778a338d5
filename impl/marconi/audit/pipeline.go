package audit

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/slotgate/slotgate/impl/client"
)

// Stage names a background pipeline of the audit fan-out (spec 002 §4).
type Stage string

const (
	StageWriter   Stage = "redis-writer" // §4.1 audit queue → Marconi Cache
	StageArchiver Stage = "pg-archiver"  // §4.2 Marconi Cache → PG audit
)

// PipelineError is one error a background pipeline met and counted (in
// marconi_redis_writer_errors_total or marconi_pg_archiver_errors_total
// under Reason). The pipelines retry; they report every error through
// their OnError hook so an operator (or the harness) sees when they failed.
type PipelineError struct {
	At     time.Time
	Stage  Stage
	Tenant string
	// Op is what failed: "append", "resume", "group", "read", "claim",
	// "write", "ack", "decode", "trimmed", "connect".
	Op string
	// Reason is the counter's reason label: the error's class.
	Reason string
	Err    string
}

// ErrCrashed is returned by Archiver.Run when its crash hook fired: the
// archiver stopped at that point without acknowledging or cleaning up, as
// a killed process would.
var ErrCrashed = errors.New("archiver crashed")

// errorReason classifies err for the counters' reason label: a Redis error
// code (lowercased), a PostgreSQL SQLSTATE, "timeout", "canceled" or
// "network".
func errorReason(err error) string {
	var pgErr *pgconn.PgError
	var netErr net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case client.KindOf(err) != "":
		return strings.ToLower(string(client.KindOf(err)))
	case errors.As(err, &pgErr):
		return "sqlstate_" + pgErr.Code
	case pgconn.Timeout(err), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	}
	return "network"
}

// backoff doubles a retry delay up to a cap.
type backoff struct{ min, max, cur time.Duration }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends, reporting whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
