package traffic

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

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

// uniq names one test invocation's keys, so -count=N runs on the one
// server never see each other's state.
func uniq() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		_ = server.Close()
	}
	fixtures.CleanupAll()
	os.Exit(code)
}
