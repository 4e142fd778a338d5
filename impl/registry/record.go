package registry

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Record is one runtime's ready entry: a membership hint (spec 000 §Mesh
// Registry Discovery — the fenced directory arbitrates ownership).
type Record struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
	// Seq counts the runtime's heartbeats.
	Seq int64 `json:"seq"`
	// IssuedMs is the heartbeat's wall-clock time (Unix ms).
	IssuedMs int64 `json:"issued_ms"`
}

// Sentinel errors of Decode; discovery skips such records and counts them.
var (
	// ErrUndecodable: the stored value is not a record at all.
	ErrUndecodable = errors.New("undecodable record")
	// ErrUnattested: the record is well-formed but its attestation does not
	// verify under the shared key, or it is bound to another runtime id.
	ErrUnattested = errors.New("unattested record")
)

// recordVersion prefixes every stored record.
const recordVersion = "v1"

// macDomain separates this MAC from any other use of the shared key.
const macDomain = "slotgate/mesh-ready/v1\n"

// Encode serialises rec attested with key: "v1.<base64url HMAC-SHA256>.<json>".
// The MAC covers the JSON, which includes the runtime id, so a valid record
// copied under another id does not verify (Decode checks the binding).
func Encode(key []byte, rec Record) string {
	body, _ := json.Marshal(rec) // a struct of strings and ints cannot fail
	return recordVersion + "." + base64.RawURLEncoding.EncodeToString(mac(key, body)) + "." + string(body)
}

// Decode parses and verifies a stored record that the index or the key
// name says belongs to id.
func Decode(key []byte, id, stored string) (Record, error) {
	var rec Record
	version, rest, ok := strings.Cut(stored, ".")
	if !ok || version != recordVersion {
		return rec, fmt.Errorf("record of %s: no %s header: %w", id, recordVersion, ErrUndecodable)
	}
	sig, body, ok := strings.Cut(rest, ".")
	if !ok {
		return rec, fmt.Errorf("record of %s: no attestation: %w", id, ErrUndecodable)
	}
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		return rec, fmt.Errorf("record of %s: %v: %w", id, err, ErrUndecodable)
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, []byte(body))) {
		return Record{}, fmt.Errorf("record of %s: attestation does not verify: %w", id, ErrUnattested)
	}
	if rec.ID != id {
		return Record{}, fmt.Errorf("record of %s is attested for %s: %w", id, rec.ID, ErrUnattested)
	}
	return rec, nil
}

// decodeTrusting is MutantTrustRecords' decoder: it parses any JSON it finds
// and believes it.
func decodeTrusting(id, stored string) (Record, error) {
	var rec Record
	body := stored
	if i := strings.LastIndex(stored, ".{"); i >= 0 {
		body = stored[i+1:]
	}
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		return rec, fmt.Errorf("record of %s: %v: %w", id, err, ErrUndecodable)
	}
	rec.ID = id
	return rec, nil
}

func mac(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macDomain))
	h.Write(body)
	return h.Sum(nil)
}
