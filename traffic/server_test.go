package traffic

import (
	"os"
	"testing"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/fixtures/fixturestest"
)

// One standalone valkey-server serves every test that needs a real node
// (started on first use; the pure tests never pay for it). Tests keep
// apart by key prefix.
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func standalone(t *testing.T) *fixtures.Topology { t.Helper(); return fixturestest.Get(t, server) }

// uniq names one test invocation's keys (fixturestest.Unique).
func uniq() string { return fixturestest.Unique() }

func TestMain(m *testing.M) { os.Exit(server.RunTests(m)) }
