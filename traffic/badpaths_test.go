package traffic

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slotgate/slotgate/impl/client"
)

// scripted answers Do with its replies in turn (the last one again once
// they run out) and counts the calls.
type scripted struct {
	client.Pool
	errs  []error
	calls int
}

func (s *scripted) Do(context.Context, client.Cmd) (any, error) {
	err := s.errs[min(s.calls, len(s.errs)-1)]
	s.calls++
	if err != nil {
		return nil, err
	}
	return "OK", nil
}

func TestSwallowRedirects(t *testing.T) {
	moved := &client.ServerError{Kind: client.KindMoved, Msg: "MOVED 1 127.0.0.1:7000"}
	oom := &client.ServerError{Kind: client.KindOther, Msg: "OOM"}
	for _, tc := range []struct {
		err     error
		wantErr bool
	}{{moved, false}, {&client.ServerError{Kind: client.KindAsk}, false}, {oom, true}, {errors.New("EOF"), true}} {
		v, err := SwallowRedirects(&scripted{errs: []error{tc.err}}).Do(t.Context(), client.NewCmd("SET", []string{"k"}, "v"))
		if (err != nil) != tc.wantErr || (err == nil && v != nil) {
			t.Errorf("%v: Do = %v, %v; want a redirect swallowed as an empty success, anything else passed on", tc.err, v, err)
		}
	}
}

func TestRetryUnknownOutcome(t *testing.T) {
	unknown := errors.New("i/o timeout")
	var acked atomic.Int64
	p := &scripted{errs: []error{unknown, unknown, nil}}
	if _, err := RetryUnknownOutcome(p, time.Second, &acked).Do(t.Context(), client.NewCmd("INCR", []string{"k"})); err != nil || p.calls != 3 || acked.Load() != 1 {
		t.Errorf("unknown outcome: err %v after %d sends, %d re-sends acknowledged; want success on the third send, one", err, p.calls, acked.Load())
	}
	p = &scripted{errs: []error{unknown}}
	if _, err := RetryUnknownOutcome(p, time.Second, nil).Do(t.Context(), client.NewCmd("INCR", []string{"k"})); err == nil || p.calls != 4 {
		t.Errorf("never answered: err %v after %d sends, want the error after 4", err, p.calls)
	}
	p = &scripted{errs: []error{&client.ServerError{Kind: client.KindOther, Msg: "WRONGTYPE"}}}
	if _, err := RetryUnknownOutcome(p, time.Second, nil).Do(t.Context(), client.NewCmd("INCR", []string{"k"})); err == nil || p.calls != 1 {
		t.Errorf("a server reply: err %v after %d sends, want no re-send", err, p.calls)
	}

	// The re-send's deadline is the fixed timeout, whatever is left of the
	// caller's.
	d := &deadlines{}
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	_, _ = RetryUnknownOutcome(d, time.Second, nil).Do(ctx, client.NewCmd("INCR", []string{"k"}))
	if len(d.left) != 4 || d.left[1] < 900*time.Millisecond {
		t.Errorf("deadlines left per send %v, want 4 sends, the re-sends with about 1 s", d.left)
	}
}

// deadlines never answers and records how long each send had.
type deadlines struct {
	client.Pool
	left []time.Duration
}

func (d *deadlines) Do(ctx context.Context, _ client.Cmd) (any, error) {
	dl, _ := ctx.Deadline()
	d.left = append(d.left, time.Until(dl))
	return nil, errors.New("i/o timeout")
}
