package fault

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestOpenBlackhole checks the blackhole from a client's side: a dial to
// the port neither connects nor is refused but times out, and once healed
// the port is free again.
func TestOpenBlackhole(t *testing.T) {
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	b, err := openBlackhole(ctx, addr)
	if err != nil {
		t.Fatalf("openBlackhole: %v", err)
	}
	began := time.Now()
	_, err = (&net.Dialer{Timeout: 500 * time.Millisecond}).DialContext(ctx, "tcp", addr)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("dial into the blackhole: %v, want a timeout", err)
	}
	if took := time.Since(began); took < 400*time.Millisecond {
		t.Errorf("dial into the blackhole ended after %v, before its timeout", took)
	}
	b.close()
	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port still held after close: %v", err)
	}
	_ = l2.Close()
}
