package client

import (
	"context"

	"github.com/valkey-io/valkey-go"
)

// DoMulti sends cmds through valkey-go's DoMulti (on a cluster: grouped per
// slot owner, MOVED and ASK followed per command without limit; TRYAGAIN,
// CLUSTERDOWN, LOADING and network errors retried only for retryable
// commands, which Arbitrary commands are not) and answers each at its
// index; see doMulti for what is re-sent.
func (p *valkeyGoPool) DoMulti(ctx context.Context, cmds []Cmd) []Result {
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	return doMulti(ctx, cmds, p.pipelineOnce)
}

func (p *valkeyGoPool) pipelineOnce(ctx context.Context, cmds []Cmd) []Result {
	out := make([]Result, len(cmds))
	var built valkey.Commands
	var at []int
	for i, c := range cmds {
		b, err := p.build(c)
		if err != nil {
			out[i] = Result{Err: err}
			continue
		}
		built, at = append(built, b), append(at, i)
	}
	if len(built) == 0 {
		return out
	}
	//slotgate:per-key-scatter each command's Result stays at its own index; doMulti re-sends only what the server refused unrun
	for j, r := range p.c.DoMulti(ctx, built...) {
		out[at[j]] = valkeyGoResult(r)
	}
	return out
}

// valkeyGoResult is one ValkeyResult as a Result, as Do reads it.
func valkeyGoResult(r valkey.ValkeyResult) Result {
	msg, err := r.ToMessage()
	if err != nil {
		if valkey.IsValkeyNil(err) {
			return Result{}
		}
		if _, ok := valkey.IsValkeyErr(err); ok {
			return Result{Err: ParseServerError(valkeyGoErrorText(&msg))}
		}
		return Result{Err: err}
	}
	v, err := valkeyGoReply(&msg)
	if err != nil {
		return Result{Err: err}
	}
	if se, ok := v.(*ServerError); ok {
		return Result{Err: se}
	}
	return Result{Reply: v}
}

// Exec runs MULTI, cmds, EXEC as one valkey-go DoMulti. On a cluster
// client, valkey-go keeps the block on the slot's connection and, when a
// queued command or EXEC answers MOVED or ASK after MULTI succeeded, sends
// the whole block again to the new owner (ASKING before MULTI for ASK):
// cluster.go doresultfn, "a transaction is found". TRYAGAIN and CLUSTERDOWN
// come back (the commands are not retryable) and exec re-sends the block.
// A DedicatedClient, valkey-go's documented path for transactions, follows
// no redirect at all: it is what the client-surface row's raw run
// exercises.
func (p *valkeyGoPool) Exec(ctx context.Context, cmds []Cmd) ([]Result, error) {
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	return exec(ctx, cmds, p.execOnce)
}

func (p *valkeyGoPool) execOnce(ctx context.Context, cmds []Cmd) ([]Result, error) {
	block := make(valkey.Commands, 0, len(cmds)+2)
	block = append(block, p.c.B().Multi().Build())
	for _, c := range cmds {
		b, err := p.build(c)
		if err != nil {
			return nil, err
		}
		block = append(block, b)
	}
	block = append(block, p.c.B().Exec().Build())
	//slotgate:same-slot exec refused a transaction whose keys are not in one slot before anything is sent (slot.Same)
	res := p.c.DoMulti(ctx, block...)
	return valkeyGoExec(res)
}

// valkeyGoExec reads the replies of MULTI, the queued commands and EXEC:
// the committed commands' results, or the error that decided the
// transaction (a queued command's redirect or refusal before EXEC's
// EXECABORT; a failed round trip, whose outcome is unknown).
func valkeyGoExec(res []valkey.ValkeyResult) ([]Result, error) {
	last := res[len(res)-1]
	msg, err := last.ToMessage()
	if err == nil {
		if msg.IsNil() {
			return nil, ErrTxAborted
		}
		elems, err := msg.ToArray()
		if err != nil {
			return nil, err
		}
		out := make([]Result, len(elems))
		for i := range elems {
			v, err := valkeyGoReply(&elems[i])
			switch se, ok := v.(*ServerError); {
			case err != nil:
				out[i] = Result{Err: err}
			case ok:
				out[i] = Result{Err: se}
			default:
				out[i] = Result{Reply: v}
			}
		}
		return out, nil
	}
	if valkey.IsValkeyNil(err) {
		return nil, ErrTxAborted
	}
	// EXEC failed: the first queued (or MULTI) error says why; a network
	// error anywhere leaves the outcome unknown.
	for _, r := range res[:len(res)-1] {
		if e := valkeyGoResult(r).Err; e != nil {
			return nil, e
		}
	}
	return nil, valkeyGoResult(last).Err
}
