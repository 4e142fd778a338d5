package client

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// Script is a Lua script addressed by its SHA1, run with RunScript.
//
// slotgate does not use redis.Script or valkey.Lua: both hide the
// EVALSHA→EVAL fallback, and the harness must see it (a fallback after a
// failover or SCRIPT FLUSH is evidence that the script cache was lost).
type Script struct {
	// Name labels the script in reports ("fence/renew").
	Name   string
	Source string
	// SHA1 is the lowercase hex SHA1 of Source, as SCRIPT LOAD returns it.
	SHA1 string
	// Stats counts every RunScript call on this script.
	Stats ScriptStats
}

// ScriptStats counts how a Script was run. Safe for concurrent use.
type ScriptStats struct {
	// EvalSHA counts EVALSHA attempts (one per RunScript call).
	EvalSHA atomic.Int64
	// NoScriptFallbacks counts EVALSHA replies of NOSCRIPT that RunScript
	// answered by sending EVAL.
	NoScriptFallbacks atomic.Int64
}

// NewScript makes a Script and computes its SHA1.
func NewScript(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	return &Script{Name: name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// RunScript runs s with keys and args on p: EVALSHA first, and on a NOSCRIPT
// reply EVAL with the full source, which also loads it into the node's
// script cache. fellBack reports that the EVAL was needed. Keys are declared
// as keys, so both backends route by the first key's slot.
func RunScript(ctx context.Context, p Pool, s *Script, keys []string, args ...string) (reply any, fellBack bool, err error) {
	numKeys := strconv.Itoa(len(keys))
	s.Stats.EvalSHA.Add(1)
	reply, err = p.Do(ctx, Cmd{Prefix: []string{"EVALSHA", s.SHA1, numKeys}, Keys: keys, Args: args})
	if !IsNoScript(err) {
		return reply, false, err
	}
	s.Stats.NoScriptFallbacks.Add(1)
	reply, err = p.Do(ctx, Cmd{Prefix: []string{"EVAL", s.Source, numKeys}, Keys: keys, Args: args})
	return reply, true, err
}
