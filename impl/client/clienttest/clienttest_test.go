package clienttest

import (
	"context"
	"fmt"
	"testing"
)

// fakeT records what the helpers do to a test; Fatalf stops the helper as
// testing.T's does (by unwinding), so the caller can look afterwards.
type fakeT struct {
	fatal    string
	cleanups int
}

type stopped struct{}

func (f *fakeT) Helper()                  {}
func (f *fakeT) Cleanup(func())           { f.cleanups++ }
func (f *fakeT) Context() context.Context { return context.Background() }
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(stopped{})
}

type addrs []string

func (a addrs) Addrs() []string { return a }

// A pool that cannot open fails the test, and leaves nothing to close.
func TestStandaloneFailsWhenThePoolCannotOpen(t *testing.T) {
	f := &fakeT{}
	func() {
		defer func() {
			if r := recover(); r != nil && r != (stopped{}) {
				panic(r)
			}
		}()
		Standalone(f, addrs(nil))
	}()
	if f.fatal == "" || f.cleanups != 0 {
		t.Fatalf("Standalone on no address: fatal %q, %d cleanups; want a failure and none", f.fatal, f.cleanups)
	}
}
