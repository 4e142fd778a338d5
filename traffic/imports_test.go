package traffic

import (
	"go/build"
	"slices"
	"testing"
)

// TestRecordsIntoHistoryNotCheck keeps a traffic → check edge from coming
// back: traffic records into history and check reads it, so traffic (and
// its tests) never import check.
func TestRecordsIntoHistoryNotCheck(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const checkPkg = "github.com/slotgate/slotgate/check"
	for _, imports := range [][]string{p.Imports, p.TestImports} {
		if slices.Contains(imports, checkPkg) {
			t.Fatalf("traffic imports %s: a record traffic produces belongs in history, a checker's logic is not traffic's to call", checkPkg)
		}
	}
}
