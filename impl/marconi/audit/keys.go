package audit

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadTenant marks a tenant ID the fan-out cannot key: empty, or holding
// a brace that would change the key's hash tag.
var ErrBadTenant = errors.New("bad tenant id")

// DefaultGroup is the PG archiver's consumer group on every tenant stream.
const DefaultGroup = "marconi-pg-archiver"

// Keys are one tenant's Redis keys. Both carry the tenant as their hash tag
// ({tenant_id}), so they live in one slot of a cluster: the writer appends
// to the stream and advances its resume offset in one Lua script, which a
// cluster only runs when every declared key is in one slot (spec 000 §Axioms
// A2: CROSSSLOT otherwise). Kept apart, a crash between the XADD and the
// offset update would either re-append entries on restart (offset behind)
// or skip them (offset ahead); together they move atomically.
type Keys struct {
	// Stream is the Marconi Cache, marconi:signals:{tenant_id} (§0.2, §4.1).
	Stream string
	// Offset holds the last audit-queue offset appended to Stream ("<gen>:<seq>"),
	// the writer's restart-safe resume point (§4.1 Restart).
	Offset string
}

// KeysFor returns tenant's keys, or ErrBadTenant. An empty tenant would give
// "{}", which hashes the whole key, so the two keys would land in different
// slots; a brace inside the tenant would make the hash tag something other
// than the tenant.
func KeysFor(tenant string) (Keys, error) {
	if err := ValidateTenant(tenant); err != nil {
		return Keys{}, err
	}
	stream := "marconi:signals:{" + tenant + "}"
	return Keys{Stream: stream, Offset: stream + ":writer-offset"}, nil
}

// ValidateTenant reports whether tenant can be keyed (see KeysFor).
func ValidateTenant(tenant string) error {
	if tenant == "" || strings.ContainsAny(tenant, "{}") {
		return fmt.Errorf("tenant %q: %w", tenant, ErrBadTenant)
	}
	return nil
}
