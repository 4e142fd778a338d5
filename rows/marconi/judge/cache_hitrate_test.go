package judge

import (
	"fmt"
	"testing"

	"github.com/slotgate/slotgate/check"
)

func cacheReads(n, masterEvery int, masterReads int64) []CacheRead {
	var out []CacheRead
	for i := range n {
		r := CacheRead{Recipient: fmt.Sprintf("r%02d", i%10), Want: fmt.Sprintf("s%02d", i%10)}
		if masterEvery > 0 && i%masterEvery == 0 {
			r.Recipient, r.StoreReads = "@master", masterReads
		}
		r.Got = r.Want
		out = append(out, r)
	}
	return out
}

func TestMarconiCacheHitFloor(t *testing.T) {
	if r := marconiCacheHitFloor(cacheReads(200, 10, 0), 0.99, 100, true); r.Status != check.Pass {
		t.Fatalf("all cached: %s %s", r.Status, r.Message)
	}
	if r := marconiCacheHitFloor(cacheReads(200, 10, 2), 0.99, 100, true); r.Status != check.Fail {
		t.Fatalf("master uncached: %s %s", r.Status, r.Message)
	}
	// Premises: a blind seam, too few sends, a wrong delivery.
	if r := marconiCacheHitFloor(cacheReads(200, 10, 0), 0.99, 100, false); r.Status != check.Unknown {
		t.Fatalf("blind seam: %s %s", r.Status, r.Message)
	}
	if r := marconiCacheHitFloor(cacheReads(20, 10, 0), 0.99, 100, true); r.Status != check.Unknown {
		t.Fatalf("few sends: %s %s", r.Status, r.Message)
	}
	wrong := cacheReads(200, 10, 2)
	wrong[5].Got = "s99"
	if r := marconiCacheHitFloor(wrong, 0.99, 100, true); r.Status != check.Unknown {
		t.Fatalf("wrong delivery: %s %s", r.Status, r.Message)
	}
}
