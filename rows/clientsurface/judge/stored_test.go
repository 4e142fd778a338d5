package judge_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slotgate/slotgate/recheck"
	_ "github.com/slotgate/slotgate/rows/clientsurface/judge"
)

// TestStoredHistoriesReplayUnderAliases: an out dir written while the row's
// checkers were registered under their Go function names (testdata, a smoke
// run of the row) is reproduced by the checkers as defined now, through the
// aliases that keep those names.
func TestStoredHistoriesReplayUnderAliases(t *testing.T) {
	src := filepath.Join("testdata", "stored-before-define")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(src))); err != nil {
		t.Fatal(err)
	}
	gz, err := os.Open(filepath.Join(src, "results.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	o, _, err := recheck.FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Differ) != 0 {
		t.Fatalf("stored checks differ on replay: %v", o.Differ)
	}
	for _, want := range []string{
		"client-surface/connection-leak/go-redis", "client-surface/connection-leak/valkey-go",
		"client-surface/resp3-push/go-redis", "client-surface/resp3-push/valkey-go",
	} {
		if !slices.Contains(o.Reproduced, want) {
			t.Errorf("%s not reproduced (reproduced: %v; not persisted: %v)", want, o.Reproduced, o.NotPersisted)
		}
	}
}
