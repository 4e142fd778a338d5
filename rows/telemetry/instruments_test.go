package telemetry_test

import "github.com/slotgate/slotgate/history"

// The bad instruments that only leave something out of their export are
// the correct instrument's scrape with a family removed: an instrument that
// never counts a series exports none of it, so this is exactly what a
// scrape of it would read. (The whole-key-slot instrument attributes
// commands by the key it is handed, inside the pool's seam, so it stays an
// impl/telemetry option.)
const (
	// dropRedirects never counts a MOVED/ASK/TRYAGAIN reply.
	dropRedirects = "drop-redirects"
	// dropGaps never counts a subscription gap.
	dropGaps = "drop-gaps"
)

// withoutFamily is samples without the series of family name.
func withoutFamily(samples []history.TelemetrySample, name string) []history.TelemetrySample {
	var out []history.TelemetrySample
	for _, s := range samples {
		if s.Name != name {
			out = append(out, s)
		}
	}
	return out
}
