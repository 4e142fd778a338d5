package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestNodeFailure: only a node that did not answer asks for a slot-map
// reload — never a server reply, a nil reply, or a caller that gave up.
func TestNodeFailure(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("connect: %w", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{redis.Nil, false},
		{context.Canceled, false},
		{redis.ErrClosed, false},
		{fmt.Errorf("wrapped: %w", refused), true},
		{io.EOF, true},
		{syscall.ECONNRESET, true},
		{context.DeadlineExceeded, true},
	} {
		if got := nodeFailure(tc.err); got != tc.want {
			t.Errorf("nodeFailure(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	// A server error reply (go-redis types them as redis.Error): the node
	// answered.
	if nodeFailure(replyErr("CLUSTERDOWN The cluster is down")) {
		t.Errorf("a server reply counted as a node failure")
	}
}

type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// TestNodeFailureHookRateLimit: a burst of failures asks for one reload per
// reloadEvery.
func TestNodeFailureHookRateLimit(t *testing.T) {
	n := 0
	h := &nodeFailureHook{reload: func() { n++ }}
	for range 100 {
		h.observe(io.EOF)
	}
	if n != 1 {
		t.Fatalf("%d reloads for a burst, want 1", n)
	}
	h.last.Store(time.Now().Add(-2 * reloadEvery).UnixNano())
	h.observe(io.EOF)
	h.observe(redis.Nil)
	if n != 2 {
		t.Fatalf("%d reloads after the interval, want 2", n)
	}
}
