package client

import (
	"errors"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisNotExecuted: only replies that prove a command did not run
// allow a write to be re-sent; a timeout or a reset connection never does.
func TestGoRedisNotExecuted(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{fmt.Errorf("get conn: %w", redis.ErrPoolTimeout), true},
		{timeout, false},
		{&net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, false},
		{errors.New("EOF"), false},
	}
	for _, c := range cases {
		if got := goRedisNotExecuted(c.err); got != c.want {
			t.Errorf("goRedisNotExecuted(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if goRedisRetryable(NewCmd("INCR", []string{"k"})) || goRedisRetryable(Cmd{Prefix: []string{"EVALSHA", "x", "1"}, Keys: []string{"k"}}) {
		t.Error("a write or a script is retryable")
	}
	if !goRedisRetryable(NewCmd("GET", []string{"k"})) {
		t.Error("GET is not retryable")
	}
}
