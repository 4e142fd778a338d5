package judge

import (
	"testing"

	"github.com/slotgate/slotgate/check"
)

func TestMarconiInvalidatorErrorsCounted(t *testing.T) {
	for _, c := range []struct {
		name string
		o    InvalidatorOutage
		want check.Status
	}{
		{"counted", InvalidatorOutage{SeamFailures: 12, Counted: 8}, check.Pass},
		{"swallowed", InvalidatorOutage{SeamFailures: 12}, check.Fail},
		{"invented", InvalidatorOutage{SeamFailures: 2, Counted: 9}, check.Fail},
		{"outage never reached it", InvalidatorOutage{Counted: 0}, check.Unknown},
	} {
		if r := marconiInvalidatorErrorsCounted(c.o); r.Status != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, r.Status, c.want, r.Message)
		}
	}
}
