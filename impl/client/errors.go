package client

import (
	"errors"
	"strings"
)

// ErrorKind classifies a server error reply by its RESP error code (the first
// word of the reply), the one place slotgate reads an error's text.
type ErrorKind string

const (
	KindCrossSlot   ErrorKind = "CROSSSLOT"
	KindNoScript    ErrorKind = "NOSCRIPT"
	KindMoved       ErrorKind = "MOVED"
	KindAsk         ErrorKind = "ASK"
	KindTryAgain    ErrorKind = "TRYAGAIN"
	KindClusterDown ErrorKind = "CLUSTERDOWN"
	KindLoading     ErrorKind = "LOADING"
	KindBusy        ErrorKind = "BUSY"
	// KindExecAbort: EXEC refused a transaction that a queued command
	// dirtied (a redirect, a wrong arity): nothing of it ran.
	KindExecAbort ErrorKind = "EXECABORT"
	// KindScript is a Lua runtime error, e.g. "ERR ... non local key".
	KindScript ErrorKind = "ERR"
	// KindNoPerm: the authenticated ACL user may not run the command or
	// touch the key (spec 000 §Conformance, Routing: TLS/auth).
	KindNoPerm ErrorKind = "NOPERM"
	// KindWrongPass: AUTH (or HELLO AUTH) with an unknown user, a wrong
	// password or a disabled user.
	KindWrongPass ErrorKind = "WRONGPASS"
	// KindNoAuth: a command on a connection that has not authenticated.
	KindNoAuth ErrorKind = "NOAUTH"
	KindOther  ErrorKind = "OTHER"
)

// ServerError is an error reply from the server.
type ServerError struct {
	Kind ErrorKind
	Msg  string
}

func (e *ServerError) Error() string { return e.Msg }

// ParseServerError classifies an error reply's text.
func ParseServerError(msg string) *ServerError {
	code, _, _ := strings.Cut(msg, " ")
	switch k := ErrorKind(code); k {
	case KindCrossSlot, KindNoScript, KindMoved, KindAsk, KindTryAgain, KindClusterDown, KindLoading, KindBusy, KindScript, KindExecAbort,
		KindNoPerm, KindWrongPass, KindNoAuth:
		return &ServerError{Kind: k, Msg: msg}
	}
	return &ServerError{Kind: KindOther, Msg: msg}
}

// RefusedError is a command the client library refused before sending it,
// so the server never saw it. valkey-go's cluster command builder panics on
// keys in different slots ("multi key command with different key slots are
// not allowed", internal/cmds/cmds.go check); the valkey-go pool recovers
// that panic into a RefusedError of KindCrossSlot. The harness must know who
// refused: a ServerError means the server did, a RefusedError that the client
// did.
type RefusedError struct {
	Kind ErrorKind
	Msg  string
}

func (e *RefusedError) Error() string { return "client refused: " + e.Msg }

// KindOf returns the kind of a server error or client refusal in err's
// chain, or "" when err carries neither (a network error, a timeout).
func KindOf(err error) ErrorKind {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Kind
	}
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Kind
	}
	return ""
}

// IsRefused reports that the client library refused the command without
// sending it (see RefusedError).
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

// IsCrossSlot reports a CROSSSLOT refusal (spec 000 §Axioms A2), whether the
// server sent it or the client refused before sending; IsRefused tells which.
func IsCrossSlot(err error) bool { return KindOf(err) == KindCrossSlot }

// IsNoScript reports a NOSCRIPT reply to EVALSHA.
func IsNoScript(err error) bool { return KindOf(err) == KindNoScript }
