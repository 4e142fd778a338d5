package judge

import (
	"fmt"
	"testing"

	"github.com/slotgate/slotgate/check"
)

// killRun: 10 signals streamed and declared durable, then 5 accepted with
// the writer cut off (1 held by the writer, 4 queued), lost at the kill.
func killRun() MeshKillRun {
	r := MeshKillRun{Tenant: "t", DuringOutage: 5, Acked: 10, Depth: 4, Batch: 64, Killed: true, Exit: "signal: killed", Streamed: map[string]int{}}
	for i := range 15 {
		id := fmt.Sprintf("s%02d", i)
		r.Accepted = append(r.Accepted, id)
		if i < 10 {
			r.Streamed[id] = 1
		}
	}
	return r
}

func TestMarconiKillLoss(t *testing.T) {
	if r := KillLoss.Judge(killRun()); r.Status != check.Pass {
		t.Fatalf("reference: %s %s", r.Status, r.Message)
	}
	cases := map[string]func(*MeshKillRun){
		"acknowledged then lost": func(r *MeshKillRun) { r.Acked = 11 },
		"lost beyond in flight":  func(r *MeshKillRun) { delete(r.Streamed, "s00"); r.Acked = 9; r.Batch = 0 },
		"duplicate":              func(r *MeshKillRun) { r.Streamed["s01"] = 2 },
		"phantom":                func(r *MeshKillRun) { r.Streamed["ghost"] = 1 },
	}
	for name, edit := range cases {
		r := killRun()
		edit(&r)
		if got := KillLoss.Judge(r); got.Status != check.Fail {
			t.Errorf("%s: %s %s, want fail", name, got.Status, got.Message)
		}
	}
	premises := map[string]func(*MeshKillRun){
		"graceful stop":      func(r *MeshKillRun) { r.Killed, r.Exit = false, "exit status 0" },
		"scrape failed":      func(r *MeshKillRun) { r.ScrapeErr = "connection refused" },
		"sent after scrape":  func(r *MeshKillRun) { r.SentAfterScrape = 1 },
		"nothing in flight":  func(r *MeshKillRun) { r.DuringOutage = 0 },
		"no acknowledgement": func(r *MeshKillRun) { r.Acked = 0 },
	}
	for name, edit := range premises {
		r := killRun()
		r.Acked += 100 // would fail: a broken premise is unknown first
		edit(&r)
		if got := KillLoss.Judge(r); got.Status != check.Unknown {
			t.Errorf("%s: %s %s, want unknown", name, got.Status, got.Message)
		}
	}
}
