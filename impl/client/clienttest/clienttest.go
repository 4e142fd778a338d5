// Package clienttest is the testing face of impl/client, as fixturestest is
// fixtures': the pool a package's tests open on a real server, closed when
// the test ends. client itself takes no *testing.T.
//
//	var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}
//
//	func TestX(t *testing.T) {
//		pool := clienttest.Standalone(t, fixturestest.Get(t, server))
//		…
//	}
package clienttest

import (
	"context"

	"github.com/slotgate/slotgate/impl/client"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
	Context() context.Context
}

// Topology is the part of a fixtures topology Standalone uses: the
// addresses to dial. It is an interface because impl links nothing of the
// harness (docs/ARCHITECTURE.md, the one-way import rule).
type Topology interface {
	Addrs() []string
}

// Pool opens a pool with o for the length of t, closing it when t ends,
// and fails t if the pool cannot open.
func Pool(t TB, o client.Options) client.Pool {
	t.Helper()
	p, err := client.NewPool(t.Context(), o)
	if err != nil {
		t.Fatalf("open %s pool on %v: %v", o.Backend, o.Addrs, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Standalone is a go-redis pool in single-node mode on topo's first
// address: what a test on one standalone server talks through.
func Standalone(t TB, topo Topology) client.Pool {
	t.Helper()
	return Pool(t, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
}
