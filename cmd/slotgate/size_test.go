package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slotgate/slotgate/report"
)

// Bad input is exit 2 before any server starts, and says what to fix.
func TestSizeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--shards", "0,3"}, {"--shards", "x"}, {"--rate", "0"}, {"--duration", "1ms"},
		{"--repeats", "0"}, {"--modes", "classic,broadcast"}, {"extra"}, {"--nope"},
	} {
		var out, errb bytes.Buffer
		err := cmdSize(args, &out, &errb)
		if !errors.Is(err, errUsage) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
	}
	var out, errb bytes.Buffer
	if err := cmdSize([]string{"--help"}, &out, &errb); !errors.Is(err, errHelp) || !strings.Contains(errb.String(), "Usage: slotgate size") {
		t.Fatalf("--help: %v %q", err, errb.String())
	}
}

// A tiny real run writes sizing.json (the report model) and a self-contained sizing.html
// with its inline SVG chart.
func TestSizeWritesReport(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"--shards", "1,2", "--modes", "classic,sharded", "--rate", "2000", "--duration", "200ms", "--repeats", "1", "--quiet", "--out", dir}
	if err := cmdSize(args, &out, &errb); err != nil {
		t.Fatalf("size: %v\n%s", err, errb.String())
	}
	t.Log("\n" + out.String())
	b, err := os.ReadFile(filepath.Join(dir, "sizing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Sizing
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 4 || len(s.Broadcast) != 2 || len(s.Bars) != 2 || s.Rate != 2000 {
		t.Fatalf("sizing.json: %d points, %d broadcast rows, %d bars", len(s.Points), len(s.Broadcast), len(s.Bars))
	}
	html, err := os.ReadFile(filepath.Join(dir, "sizing.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "<polyline", "sharded-2-vs-1", "classic-2-vs-1"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("sizing.html lacks %q", want)
		}
	}
	for _, banned := range []string{"<script", "http://", "https://"} {
		if bytes.Contains(bytes.ReplaceAll(html, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil), []byte(banned)) {
			t.Errorf("sizing.html is not self-contained: has %q", banned)
		}
	}
}
