package client

import (
	"context"
	"errors"
	"math"

	"github.com/redis/go-redis/v9"
)

// DoMulti sends cmds through go-redis's Pipeline (ClusterClient.Pipeline on
// a cluster, which groups the commands per node and follows MOVED and ASK
// per command up to MaxRedirects rounds) and answers each at its index;
// see doMulti for what is re-sent.
//
// As read in go-redis v9.23.0 (osscluster.go pipelineReadCmds): a read
// that fails mid-batch (a timeout, a broken connection) re-queues the
// node's WHOLE batch — the commands whose replies had already come
// included — and a TRYAGAIN on the batch's first command does the same. A
// write re-sent that way runs twice while its caller sees one reply. So
// every command that is not a read goes as noRetryCmd: a batch holding one
// is never re-sent by the library (cmdsContainNoRetry), and doMulti
// re-sends only what the server proved it did not run.
func (p *goRedisPool) DoMulti(ctx context.Context, cmds []Cmd) []Result {
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	return doMulti(ctx, cmds, p.pipelineOnce)
}

func (p *goRedisPool) pipelineOnce(ctx context.Context, cmds []Cmd) []Result {
	pipe := p.c.Pipeline()
	sent := p.queue(ctx, pipe, cmds)
	_, _ = pipe.Exec(ctx) // every command carries its own outcome
	out := make([]Result, len(sent))
	for i, c := range sent {
		out[i] = goRedisResult(c)
	}
	return out
}

// queue adds cmds to pipe in go-redis's form, keyed by their first
// declared key (as Do), a write as noRetryCmd.
func (p *goRedisPool) queue(ctx context.Context, pipe redis.Pipeliner, cmds []Cmd) []*redis.Cmd {
	sent := make([]*redis.Cmd, len(cmds))
	for i, c := range cmds {
		flat := c.flatten()
		args := make([]any, len(flat))
		for j, a := range flat {
			args[j] = a
		}
		sent[i] = redis.NewCmd(ctx, args...)
		if len(c.Keys) > 0 && len(c.Prefix) <= math.MaxInt8 {
			sent[i].SetFirstKeyPos(int8(len(c.Prefix)))
		}
		var queued redis.Cmder = sent[i]
		if !goRedisRetryable(c) {
			queued = noRetryCmd{sent[i]}
		}
		_ = pipe.Process(ctx, queued)
	}
	return sent
}

// goRedisResult is one sent command's Result.
func goRedisResult(c *redis.Cmd) Result {
	v, err := c.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return Result{}
	case err != nil:
		return Result{Err: goRedisErr(err)}
	}
	return Result{Reply: normalise(v, goRedisNested)}
}

// Exec runs cmds through go-redis's TxPipeline (ClusterClient.TxPipeline:
// MULTI, cmds, EXEC on the slot's primary; MOVED and ASK followed for the
// whole transaction, ASKING before MULTI, TRYAGAIN and CLUSTERDOWN backed
// off, up to MaxRedirects rounds; a read that fails after EXEC was written
// is never re-sent). go-redis reports a transaction that did not commit by
// setting the deciding error on every command without one, and a
// committed one by each command's own result, so the two are told apart
// by the errors: a redirect, EXECABORT or a failed round trip on any
// command means EXEC did not run (or its outcome is unknown).
func (p *goRedisPool) Exec(ctx context.Context, cmds []Cmd) ([]Result, error) {
	ctx, cancel := callContext(ctx, p.call)
	defer cancel()
	return exec(ctx, cmds, p.execOnce)
}

func (p *goRedisPool) execOnce(ctx context.Context, cmds []Cmd) ([]Result, error) {
	pipe := p.c.TxPipeline()
	sent := p.queue(ctx, pipe, cmds)
	if _, err := pipe.Exec(ctx); err == nil {
		out := make([]Result, len(sent))
		for i, c := range sent {
			out[i] = goRedisResult(c)
		}
		return out, nil
	}
	out := make([]Result, len(sent))
	var cause error
	for i, c := range sent {
		out[i] = goRedisResult(c)
		err := out[i].Err
		if err == nil || cause != nil {
			continue
		}
		switch k := KindOf(err); {
		case k == "" || resendable(err) || k == KindExecAbort:
			cause = err
		}
	}
	if cause != nil {
		return nil, cause
	}
	return out, nil // committed: each command's runtime error is its own
}
