package client

import (
	"context"
	"errors"
	"net"
	"testing"
)

// doMulti re-sends exactly the commands the server refused unrun, keeps
// every other outcome at its own index, and never re-sends an unknown one.
func TestDoMultiResendsOnlyWhatDidNotRun(t *testing.T) {
	cmds := []Cmd{NewCmd("INCR", []string{"a"}), NewCmd("INCR", []string{"b"}), NewCmd("INCR", []string{"c"}), NewCmd("INCR", []string{"d"}), {}}
	timeout := &net.OpError{Op: "read", Err: errors.New("i/o timeout")}
	sends := map[string]int{}
	send := func(_ context.Context, batch []Cmd) []Result {
		out := make([]Result, len(batch))
		for i, c := range batch {
			k := c.Keys[0]
			sends[k]++
			switch {
			case k == "a" && sends[k] == 1:
				out[i] = Result{Err: ParseServerError("MOVED 15495 127.0.0.1:7001")}
			case k == "b":
				out[i] = Result{Err: ParseServerError("ERR value is not an integer or out of range")}
			case k == "c":
				out[i] = Result{Err: timeout}
			default:
				out[i] = Result{Reply: int64(len(k) * sends[k])}
			}
		}
		return out
	}
	res := doMulti(context.Background(), cmds, send)
	if sends["a"] != 2 || sends["b"] != 1 || sends["c"] != 1 || sends["d"] != 1 {
		t.Fatalf("sends %v: want a re-sent once after MOVED, b, c and d sent once", sends)
	}
	if res[0].Reply != int64(2) || KindOf(res[1].Err) != KindScript || !errors.Is(res[2].Err, timeout) || res[3].Reply != int64(1) {
		t.Fatalf("results not at their own index: %+v", res)
	}
	if !errors.Is(res[4].Err, ErrBadCommand) {
		t.Fatalf("a command without a name: %v", res[4].Err)
	}
}

// exec re-sends a transaction the server refused unrun, returns at once on
// an unknown outcome, and refuses keys of different slots before sending.
func TestExecResendsWholeOnlyWhenNotRun(t *testing.T) {
	tx := []Cmd{NewCmd("INCR", []string{"{t}a"}), NewCmd("INCR", []string{"{t}b"})}
	n := 0
	res, err := exec(context.Background(), tx, func(context.Context, []Cmd) ([]Result, error) {
		n++
		if n < 3 {
			return nil, ParseServerError("TRYAGAIN Multiple keys request during rehashing of slot")
		}
		return []Result{{Reply: int64(1)}, {Reply: int64(1)}}, nil
	})
	if err != nil || n != 3 || len(res) != 2 {
		t.Fatalf("after two TRYAGAIN: %v, %d sends, %v", err, n, res)
	}
	n = 0
	_, err = exec(context.Background(), tx, func(context.Context, []Cmd) ([]Result, error) {
		n++
		return nil, errors.New("EOF")
	})
	if err == nil || n != 1 {
		t.Fatalf("a lost EXEC reply was re-sent (%d sends) or hidden (%v)", n, err)
	}
	_, err = exec(context.Background(), []Cmd{NewCmd("INCR", []string{"a"}), NewCmd("INCR", []string{"b"})}, func(context.Context, []Cmd) ([]Result, error) {
		t.Fatal("a cross-slot transaction was sent")
		return nil, nil
	})
	if !IsCrossSlot(err) || !IsRefused(err) {
		t.Fatalf("cross-slot transaction: %v", err)
	}
}
