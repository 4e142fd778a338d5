package client

import (
	"testing"
	"time"
)

func TestSetOption(t *testing.T) {
	var o struct {
		Interval time.Duration
		Count    int
	}
	if !setOption(&o, "Interval", 3*time.Second) || o.Interval != 3*time.Second {
		t.Errorf("present field not set: %+v", o)
	}
	if setOption(&o, "Missing", time.Second) {
		t.Error("a field the release lacks was reported set")
	}
	if setOption(&o, "Count", time.Second) || o.Count != 0 {
		t.Error("a value of another type was set")
	}
	if setOption(o, "Interval", time.Second) {
		t.Error("a non-pointer was set")
	}
}
