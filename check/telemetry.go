package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/history"
)

// Spec 000 §Conformance, Telemetry: a pod's metrics scrape without error,
// with every family it must export. The telemetry row's other checkers live
// with the row (rows/telemetry/judge).

// TelemetryExposed is the errors checker of a scrape: it succeeded, every
// required family is there with at least one sample, every slot label is a
// slot, and every node label names a node of the topology (a command
// attributed to no known node is a collection error too). It stays here,
// beside the generic core, because two families judge scrapes with it: the
// telemetry row defines it by name (rows/telemetry/judge) and the Marconi
// metrics check composes it (rows/marconi/judge MetricsExposed).
func TelemetryExposed(s history.TelemetryScrape, required []string, nodes map[string]bool) Result {
	const name = "telemetry-exposed"
	if s.Err != "" || s.Status != 200 {
		return fail(name, s.Err, "scrape failed: HTTP %d %s", s.Status, s.Err)
	}
	count := map[string]int{}
	var bad []string
	for _, smp := range s.Samples {
		count[smp.Name]++
		if v, ok := smp.Labels["slot"]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 0 || n >= 16384 {
				bad = append(bad, fmt.Sprintf("%s: slot label %q is not a slot", smp.Name, v))
			}
		}
		if v, ok := smp.Labels["node"]; ok && !nodes[v] {
			bad = append(bad, fmt.Sprintf("%s{slot=%q}: node label %q is no node of the topology", smp.Name, smp.Labels["slot"], v))
		}
	}
	var missing []string
	for _, f := range required {
		if count[f] == 0 {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fail(name, strings.Join(missing, "\n"), "%d required metric families missing from the scrape: %s", len(missing), strings.Join(missing, ", "))
	}
	if len(bad) > 0 {
		return fail(name, strings.Join(first(bad, 6), "\n"), "%d samples with a bad slot or node label", len(bad))
	}
	return pass(name, "scrape HTTP 200, %d samples, all %d required families present, slot and node labels valid", len(s.Samples), len(required))
}
