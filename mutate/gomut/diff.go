package gomut

import (
	"fmt"
	"strings"
)

// diffContext is the unified diff's context lines.
const diffContext = 3

// unifiedDiff is a one-hunk unified diff of a against b: a mutant changes one
// contiguous region, so the common prefix and suffix bound the hunk exactly.
func unifiedDiff(name string, a, b []byte) string {
	al, bl := lines(string(a)), lines(string(b))
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	s := 0
	for s < len(al)-p && s < len(bl)-p && al[len(al)-1-s] == bl[len(bl)-1-s] {
		s++
	}
	if p == len(al) && p == len(bl) {
		return ""
	}
	lo := max(0, p-diffContext)
	aHi := min(len(al), len(al)-s+diffContext)
	bHi := min(len(bl), len(bl)-s+diffContext)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(lo, aHi-lo), hunkRange(lo, bHi-lo))
	for _, l := range al[lo:p] {
		sb.WriteString(" " + l + "\n")
	}
	for _, l := range al[p : len(al)-s] {
		sb.WriteString("-" + l + "\n")
	}
	for _, l := range bl[p : len(bl)-s] {
		sb.WriteString("+" + l + "\n")
	}
	for _, l := range al[len(al)-s : aHi] {
		sb.WriteString(" " + l + "\n")
	}
	return sb.String()
}

// hunkRange formats a hunk's start,count (1-based; an empty range names the
// line before it, as diff -u does).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
