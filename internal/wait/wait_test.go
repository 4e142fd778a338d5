package wait_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slotgate/slotgate/internal/wait"
)

func TestUntilHolds(t *testing.T) {
	n := 0
	err := wait.Until(context.Background(), time.Millisecond, func(context.Context) error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err %v after %d checks, want nil after 3", err, n)
	}
}

func TestUntilNamesTheLastReason(t *testing.T) {
	err := wait.Within(context.Background(), 30*time.Millisecond, time.Millisecond, func(context.Context) error {
		return errors.New("replica link down")
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "replica link down") {
		t.Fatalf("got %v, want the deadline and the last reason", err)
	}
}

func TestUntilStopsOnPermanent(t *testing.T) {
	gone := errors.New("node gone")
	n := 0
	err := wait.Until(context.Background(), time.Millisecond, func(context.Context) error {
		n++
		return wait.Permanent(gone)
	})
	if err != gone || n != 1 {
		t.Fatalf("err %v after %d checks, want the permanent error unwrapped after 1", err, n)
	}
}

// A zero bound still asks once: a condition that holds is reported as
// holding, one that does not is reported with its reason.
func TestWithinZeroChecksOnce(t *testing.T) {
	n := 0
	if err := wait.Within(context.Background(), 0, time.Millisecond, func(context.Context) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("holding: err %v after %d checks, want nil after 1", err, n)
	}
	err := wait.Within(context.Background(), 0, time.Millisecond, func(context.Context) error { return errors.New("queue not empty") })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "queue not empty") {
		t.Fatalf("not holding: got %v, want the deadline and the reason", err)
	}
}
