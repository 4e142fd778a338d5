package traffic

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// One standalone valkey-server serves every test that needs a real node
// (started on first use; the pure tests never pay for it). Tests keep
// apart by key prefix.
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func standalone(t *testing.T) *fixtures.Topology {
	t.Helper()
	topo, err := server.Get(context.Background())
	if err != nil {
		t.Fatalf("start valkey: %v", err)
	}
	return topo
}

// uniq names one test invocation's keys, so -count=N runs on the one
// server never see each other's state.
func uniq() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }

func TestMain(m *testing.M) {
	code := m.Run()
	_ = server.Close()
	fixtures.CleanupAll()
	os.Exit(code)
}
