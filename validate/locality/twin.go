// Package locality is the runtime twin of the static locality validator (spec 000
// §Conformance, "Locality contract"; Axiom A2): a client.Pool that computes the hash slots
// of every command it forwards — multi-key commands and script calls (EVAL/EVALSHA keys)
// alike — and records a violation for every call whose keys span slots, whatever the
// server said. On a standalone node the server accepts such a call, so nothing else would
// notice until the keyspace is split: the twin makes that silent hazard visible in
// disabled mode, where the migration runs (spec 000 §The protocol).
//
// It sees what the static rule cannot: key slices built at run time, behind parameters,
// fields and function results. It also records a key that travels on the wire without
// being declared as a key (client.Cmd.Keys), which a cluster client would route by some
// other key.
//
// The twin asserts nothing; the locality row judges its History with the pure checkers
// in rows/locality/judge.
package locality

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/validate"
)

// The twin's history types live in package check, which links no client library, so the
// row's checkers (rows/locality/judge) judge a stored history offline (`slotgate check
// --from`) without this package.
type (
	Violation = check.LocalityViolation
	Call      = check.LocalityCall
	History   = check.LocalityHistory
)

const (
	ViolationCrossSlot     = check.ViolationCrossSlot
	ViolationUndeclaredKey = check.ViolationUndeclaredKey
)

// MaxKept bounds the violating calls a History keeps verbatim.
const MaxKept = 200

// Pool is the twin: a client.Pool that judges every command before forwarding it to the
// wrapped pool. Safe for concurrent use.
type Pool struct {
	client.Pool
	table *validate.Table
	mu    sync.Mutex
	h     History
}

// Wrap returns the twin over p, placing keys with the validator's hand table. Everything
// but Do is p's.
func Wrap(p client.Pool) *Pool { return WrapTable(p, nil) }

// WrapTable is Wrap with the command table t (the server's, from ServerTable); nil is the
// hand table.
func WrapTable(p client.Pool, t *validate.Table) *Pool {
	if t == nil {
		t = validate.Hand("")
	}
	return &Pool{Pool: p, table: t, h: History{Errors: map[string]int{}}}
}

// Do judges cmd, forwards it, and records the outcome.
func (p *Pool) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	call, multi, script := judge(p.table, cmd)
	if call.Violation != "" {
		call.Site = callSite()
	}
	reply, err := p.Pool.Do(ctx, cmd)
	p.mu.Lock()
	defer p.mu.Unlock()
	if client.IsNoScript(err) {
		p.h.NoScript++
		return reply, err
	}
	p.h.Calls++
	if multi {
		p.h.MultiKey++
	}
	if script {
		p.h.Scripts++
	}
	if call.Command != "" && p.table.CanGroup(call.Command) {
		p.h.Grouping++
	}
	if err != nil {
		kind := string(client.KindOf(err))
		if kind == "" {
			kind = "network"
		}
		p.h.Errors[kind]++
		if client.IsRefused(err) {
			p.h.Refused++
		}
		call.ErrKind = kind
	}
	if call.Violation != "" {
		p.h.ViolationCount++
		if len(p.h.Violations) < MaxKept {
			p.h.Violations = append(p.h.Violations, call)
		}
	}
	return reply, err
}

// History returns a copy of what the twin recorded so far.
func (p *Pool) History() History {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.h
	h.Violations = slices.Clone(p.h.Violations)
	h.Errors = make(map[string]int, len(p.h.Errors))
	for k, v := range p.h.Errors {
		h.Errors[k] = v
	}
	return h
}

// judge computes a command's keys and slots. The keys are the ones on the wire, read with
// the static validator's key table (validate.CommandKeys: EVAL/EVALSHA's numkeys form and
// every tabled command), or the declared Keys for a command the table does not know.
func judge(t *validate.Table, cmd client.Cmd) (c Call, multi, script bool) {
	wire := make([]string, 0, len(cmd.Prefix)+len(cmd.Keys)+len(cmd.Args))
	wire = append(append(append(wire, cmd.Prefix...), cmd.Keys...), cmd.Args...)
	if len(wire) == 0 {
		return c, false, false
	}
	c.Command = strings.ToUpper(wire[0])
	keys, known := t.CommandKeys(wire)
	if !known {
		keys = cmd.Keys
	}
	c.Keys = keys
	script = validate.IsScriptCommand(c.Command)
	multi = len(keys) >= 2
	for _, k := range keys {
		if s := slot.Of(k); !slices.Contains(c.Slots, s) {
			c.Slots = append(c.Slots, s)
		}
	}
	slices.Sort(c.Slots)
	switch {
	case len(c.Slots) > 1:
		c.Violation = ViolationCrossSlot
	case known:
		for _, k := range keys {
			if !slices.Contains(cmd.Keys, k) {
				c.Violation = ViolationUndeclaredKey
				break
			}
		}
	}
	return c, multi, script
}

// twinFile is this file and moduleRoot the module's directory (two levels above it), as
// compiled into this binary: call sites skip the twin and print relative to the module.
var twinFile, moduleRoot = func() (string, string) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", ""
	}
	return file, filepath.Dir(filepath.Dir(filepath.Dir(file)))
}()

// clientPkg is impl/client's import path: its frames (RunScript) are not where a call
// was written.
const clientPkg = "github.com/slotgate/slotgate/impl/client."

// callSite is the first frame outside impl/client and the twin.
func callSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.File != twinFile && !strings.HasPrefix(f.Function, clientPkg) {
			file := f.File
			if rel, err := filepath.Rel(moduleRoot, f.File); err == nil && !strings.HasPrefix(rel, "..") {
				file = rel
			}
			return filepath.ToSlash(file) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return "?"
		}
	}
}

// Merge adds histories of several twins (one per workload) into one.
func Merge(hs ...History) History {
	out := History{Errors: map[string]int{}}
	for _, h := range hs {
		out.Calls += h.Calls
		out.MultiKey += h.MultiKey
		out.Scripts += h.Scripts
		out.Grouping += h.Grouping
		out.ViolationCount += h.ViolationCount
		out.Refused += h.Refused
		out.NoScript += h.NoScript
		for k, v := range h.Errors {
			out.Errors[k] += v
		}
		for _, c := range h.Violations {
			if len(out.Violations) < MaxKept {
				out.Violations = append(out.Violations, c)
			}
		}
	}
	return out
}
