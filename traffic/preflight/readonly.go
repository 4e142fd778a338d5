package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slotgate/slotgate/impl/client"
)

// ErrNotReadOnly is returned for any command outside the allowlist: the
// preflight runs against production endpoints and must never write.
var ErrNotReadOnly = errors.New("preflight sends read-only commands only")

// probeScript is the A3 probe's body: it touches no key, so running it
// (when slot rules let it) changes nothing; only the declared keys matter.
const probeScript = "return 0"

// readOnly is a Pool that sends only the commands the checklist needs, all
// of which read: a later edit that adds a write fails here, not in
// production.
type readOnly struct{ client.Pool }

// Do sends cmd if it is on the allowlist.
func (p readOnly) Do(ctx context.Context, cmd client.Cmd) (any, error) {
	if err := allowed(cmd); err != nil {
		return nil, err
	}
	return p.Pool.Do(ctx, cmd)
}

// allowed is the allowlist: PING, INFO, SCAN, CLUSTER INFO|SHARDS|KEYSLOT|
// MYID, MEMORY USAGE, CONFIG GET of the durability item's parameters, and
// EVAL of probeScript only.
func allowed(cmd client.Cmd) error {
	words := append(append(append([]string(nil), cmd.Prefix...), cmd.Keys...), cmd.Args...)
	if len(words) == 0 {
		return fmt.Errorf("empty command: %w", ErrNotReadOnly)
	}
	name := strings.ToUpper(words[0])
	sub := ""
	if len(words) > 1 {
		sub = strings.ToUpper(words[1])
	}
	switch name {
	case "PING", "INFO", "SCAN":
		return nil
	case "CLUSTER":
		switch sub {
		case "INFO", "SHARDS", "KEYSLOT", "MYID":
			return nil
		}
	case "MEMORY":
		if sub == "USAGE" {
			return nil
		}
	case "CONFIG":
		if sub == "GET" && len(words) == 3 && slices.Contains(durabilityConfig, words[2]) {
			return nil
		}
	case "EVAL":
		if len(words) > 1 && words[1] == probeScript {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %w", name, sub, ErrNotReadOnly)
}
