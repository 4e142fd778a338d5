package client

import (
	"testing"
	"time"
)

// TestSetOption: a field the options struct has is set; one it lacks, or
// of another type, is left alone and reported.
func TestSetOption(t *testing.T) {
	var o struct {
		Interval time.Duration
		Seconds  int
	}
	if !setOption(&o, "Interval", time.Second) || o.Interval != time.Second {
		t.Errorf("Interval not set: %+v", o)
	}
	if setOption(&o, "Missing", time.Second) {
		t.Errorf("a missing field reported set")
	}
	if setOption(&o, "Seconds", time.Second) || o.Seconds != 0 {
		t.Errorf("a field of another type was set: %+v", o)
	}
}
