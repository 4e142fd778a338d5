package check

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Every checker a suite judges through is listed in replayable, or
// `slotgate check --from` lists its check as "not persisted" (three
// marconi-stream and cache-lifecycle checkers were missed that way).
func TestSuitesJudgeOnlyReplayableCheckers(t *testing.T) {
	listed := map[string]bool{}
	for _, fn := range replayable {
		name := funcName(reflect.ValueOf(fn))
		listed[name[strings.LastIndex(name, ".")+1:]] = true
	}
	judge := regexp.MustCompile(`check\.Judge\(check\.([A-Za-z0-9_]+)`)
	files, err := filepath.Glob(filepath.Join("..", "suites", "*", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range judge.FindAllStringSubmatch(string(b), -1) {
			if !listed[m[1]] {
				t.Errorf("%s judges through %s, which is not in replayable (check/replay.go)", f, m[1])
			}
		}
	}
}
