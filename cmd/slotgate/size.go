package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/runenv"
	"github.com/slotgate/slotgate/sizing"
)

const sizeHelp = `Usage: slotgate size [flags]

Measures the fan-out cost that decides the shard count (spec 000 §Open Decisions D1;
Axiom A4). It starts an N×0 cluster of real servers for each shard count and,
at a fixed cluster-wide message rate reached with pipelined concurrent senders, sends one
seeded stream of exact event topics with classic PUBLISH and with SPUBLISH — and keyed
SET, GET and a one-key EVALSHA for comparison — each to its key's owner. Per burst it
reads every node's main-thread CPU (INFO cpu used_cpu_{user,sys}_main_thread, the node's
idle rate subtracted) and INFO commandstats; each point runs --repeats bursts, interleaved
with every other point's, and reports medians.

It reports the cost per message (per node, cluster-wide, hottest node), the broadcast term
shard count cannot reduce (classic − sharded per node), the scaling curve, and the sizing
bar: SPUBLISH per-node cost at N shards within 1.5× of 1/N of the single-shard cost, and
PUBLISH ~flat. The bar is reported, not enforced: the numbers are the deliverable.

Writes sizing.json and sizing.html (self-contained, inline SVG chart) into --out.
Exit codes: 0 measured · 1 a measurement failed (what was measured is still written) ·
2 bad input.

Flags:
`

type sizeFlags struct {
	shards, modes, out, server, ports string
	rate, repeats, senders            int
	duration                          time.Duration
	seed                              uint64
	quiet                             bool
}

func cmdSize(args []string, stdout, stderr io.Writer) error {
	var f sizeFlags
	fs := flag.NewFlagSet("size", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.shards, "shards", "1,3,6", "comma `list` of shard counts (primaries, no replicas)")
	fs.IntVar(&f.rate, "rate", 20_000, "target cluster-wide message `rate` per second")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "send phase of one burst")
	fs.IntVar(&f.repeats, "repeats", 3, "bursts per point; medians are reported")
	fs.IntVar(&f.senders, "senders", 2, "pipelined concurrent senders per node")
	fs.StringVar(&f.modes, "modes", "classic,sharded,set,get,evalsha", "comma `list` of traffic modes")
	fs.StringVar(&f.out, "out", "slotgate-sizing", "directory for sizing.json and sizing.html")
	fs.StringVar(&f.server, "server", "valkey-server", "server binary: valkey-server 8, or redis-server >= 7")
	fs.StringVar(&f.ports, "ports", "", "confine every port the servers bind to LO-HI (default: allocate free ports)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the topic stream (the same at every shard count)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-burst progress")
	fs.Usage = func() { fmt.Fprint(stderr, sizeHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate size --help)", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (see slotgate size --help)", errUsage, fs.Arg(0))
	}
	opts, err := sizeOptions(f)
	if err != nil {
		return err
	}
	path, version, err := serverBinary(f.server)
	if err != nil {
		return err
	}
	opts.Fixtures = append(opts.Fixtures, fixtures.WithServer(path))
	if f.ports != "" {
		lo, hi, err := runenv.ParsePorts(f.ports)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		opts.Fixtures = append(opts.Fixtures, fixtures.WithPortRange(lo, hi))
	}
	if !f.quiet {
		opts.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("%w: --out %s: %v", errUsage, f.out, err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	curve, measureErr := sizing.Measure(ctx, opts)
	s := curve.Report()
	s.Generated, s.Version = began, version
	if s.Server == "" {
		s.Server = version
	}
	s.Host = fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	s.Notes = sizeNotes(opts, time.Since(began))
	if measureErr != nil {
		s.Notes = append(s.Notes, "INCOMPLETE: "+measureErr.Error())
	}
	if err := writeSizing(f.out, s); err != nil {
		return err
	}
	fmt.Fprint(stdout, curve.Table())
	for _, b := range s.Bars {
		verdict := "within"
		if !b.Met {
			verdict = "OUTSIDE"
		}
		fmt.Fprintf(stdout, "bar %-18s %.3f (accepted %.3f–%.3f): %s — %s\n", b.Name, b.Value, b.Low, b.High, verdict, b.What)
	}
	fmt.Fprintf(stdout, "wrote %s and %s (%v)\n", filepath.Join(f.out, "sizing.json"), filepath.Join(f.out, "sizing.html"), time.Since(began).Round(time.Second))
	if measureErr != nil {
		return fmt.Errorf("size: %w", measureErr)
	}
	return nil
}

// sizeOptions turns flags into sizing options, or a usage error naming what to fix.
func sizeOptions(f sizeFlags) (sizing.Options, error) {
	o := sizing.Options{Rate: f.rate, Duration: f.duration, Repeats: f.repeats, Senders: f.senders, Seed: f.seed}
	for _, part := range strings.Split(f.shards, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 16 {
			return o, fmt.Errorf("%w: --shards %q: want a comma list of shard counts between 1 and 16, e.g. 1,3,6", errUsage, f.shards)
		}
		o.Shards = append(o.Shards, n)
	}
	for _, part := range strings.Split(f.modes, ",") {
		m, err := sizing.ParseMode(strings.TrimSpace(part))
		if err != nil {
			return o, fmt.Errorf("%w: --modes: %v", errUsage, err)
		}
		o.Modes = append(o.Modes, m)
	}
	switch {
	case f.rate < 1:
		return o, fmt.Errorf("%w: --rate %d: want at least 1 message per second", errUsage, f.rate)
	case f.duration < 10*time.Millisecond:
		return o, fmt.Errorf("%w: --duration %v: want at least 10ms", errUsage, f.duration)
	case f.repeats < 1 || f.senders < 1:
		return o, fmt.Errorf("%w: --repeats and --senders must be at least 1", errUsage)
	case int(float64(f.rate)*f.duration.Seconds()) < 1:
		return o, fmt.Errorf("%w: --rate × --duration sends no message", errUsage)
	}
	return o, nil
}

// sizeNotes says how the numbers were made, for the page: a reader must be able to judge
// what they can and cannot carry.
func sizeNotes(o sizing.Options, took time.Duration) []string {
	return []string{
		fmt.Sprintf("Each point: an unmeasured warm-up, then %d burst(s) of %v at %d msg/s (%d messages) over %d pipelined sender(s) per node, flushing every 5 ms; medians over bursts. Every cluster stays up for the whole run and the bursts are interleaved (each repeat visits every shard count and mode in turn), so a slow phase of the host hits every point alike.",
			o.Repeats, o.Duration, o.Rate, int(float64(o.Rate)*o.Duration.Seconds()), o.Senders),
		"CPU is each node's main thread (INFO cpu used_cpu_user_main_thread + used_cpu_sys_main_thread) over the burst and the wait for cluster-bus propagation to finish, minus the node's idle rate measured for 300 ms just before.",
		"Per node = the cluster's net main-thread CPU ÷ messages ÷ nodes: what one node pays per message sent to the cluster. Sharded and keyed traffic should fall as 1/N; classic PUBLISH stays flat (A4).",
		"Topics are exact event topics buzz:<community>:channel:<uuid> with no hash tag, so they spread over every slot; keyed modes use the same strings as keys. PUBLISH and SPUBLISH go to the key's owner; there are no subscribers, so the cost is the fan-out itself, not delivery.",
		"Servers, proxies and the load generator share this host's CPUs; absolute µs are host-specific, the ratios between modes and shard counts are the result.",
		fmt.Sprintf("Whole measurement took %v.", took.Round(time.Second)),
	}
}

func writeSizing(dir string, s report.Sizing) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode sizing.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sizing.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write sizing.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "sizing.html"))
	if err != nil {
		return fmt.Errorf("write sizing.html: %w", err)
	}
	if err := report.WriteSizingHTML(f, s); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write sizing.html: %w", err)
	}
	return nil
}
