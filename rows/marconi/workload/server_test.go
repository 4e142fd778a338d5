package workload

import (
	"os"
	"testing"

	"github.com/slotgate/slotgate/fixtures"
)

// One standalone valkey-server serves every test that runs a mesh on a
// real SessionStore (started on first use; the pure tests never pay for
// it). Tests keep apart by key prefix.
var server = &fixtures.Shared{Spec: fixtures.StandaloneSpec()}

func TestMain(m *testing.M) { os.Exit(server.RunTests(m)) }
