package traffic

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/slotgate/slotgate/fixtures"
)

// One standalone valkey-server serves every test that needs a real node
// (started on first use; the pure tests never pay for it). Tests keep
// apart by key prefix.
var (
	serverOnce sync.Once
	server     *fixtures.Topology
	serverErr  error
)

func standalone(t *testing.T) *fixtures.Topology {
	t.Helper()
	serverOnce.Do(func() {
		server, serverErr = fixtures.Run(context.Background(), fixtures.StandaloneSpec())
	})
	if serverErr != nil {
		t.Fatalf("start valkey: %v", serverErr)
	}
	return server
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		_ = server.Close()
	}
	fixtures.CleanupAll()
	os.Exit(code)
}
