package preflight

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/history"
)

// cpuRead is one INFO cpu read: the engine's CPU seconds so far and when
// the reply arrived (the midpoint of the round trip).
type cpuRead struct {
	seconds float64
	source  string
	at      time.Time
}

// engineCPU picks the engine thread's CPU seconds from INFO cpu: the main
// thread's own counters where the server has them (Valkey, Redis >= 6.2
// with used_cpu_*_main_thread), else the whole process's.
func engineCPU(info map[string]string) (float64, string, error) {
	sum := func(sys, user string) (float64, bool) {
		a, err1 := strconv.ParseFloat(info[sys], 64)
		b, err2 := strconv.ParseFloat(info[user], 64)
		return a + b, err1 == nil && err2 == nil
	}
	if v, ok := sum("used_cpu_sys_main_thread", "used_cpu_user_main_thread"); ok {
		return v, "main thread", nil
	}
	if v, ok := sum("used_cpu_sys", "used_cpu_user"); ok {
		return v, "process", nil
	}
	return 0, "", fmt.Errorf("INFO cpu has no used_cpu_sys/used_cpu_user")
}

func (g *gatherer) readCPU(ctx context.Context, n *node) (cpuRead, error) {
	sent := time.Now()
	inf, err := info(ctx, n.pool, "cpu")
	if err != nil {
		return cpuRead{}, err
	}
	got := time.Now()
	v, src, err := engineCPU(inf)
	return cpuRead{seconds: v, source: src, at: sent.Add(got.Sub(sent) / 2)}, err
}

// sampleCPU reads INFO cpu on every node twice, CPUInterval apart, all
// nodes at once (so the whole item takes one interval).
func (g *gatherer) sampleCPU(ctx context.Context) {
	samples := make([]history.CPUSample, len(g.nodes))
	idx := map[*node]int{}
	for i, n := range g.nodes {
		idx[n] = i
	}
	forEach(g.nodes, func(n *node) {
		s := history.CPUSample{Node: n.Addr, Primary: n.Primary}
		defer func() { samples[idx[n]] = s }()
		if n.pool == nil {
			s.Err = "not connected: " + n.Err
			return
		}
		a, err := g.readCPU(ctx, n)
		if err != nil {
			s.Err = err.Error()
			return
		}
		select {
		case <-ctx.Done():
			s.Err = ctx.Err().Error()
			return
		case <-time.After(g.opts.CPUInterval):
		}
		b, err := g.readCPU(ctx, n)
		if err != nil {
			s.Err = err.Error()
			return
		}
		s.Interval, s.CPUSeconds, s.Source = b.at.Sub(a.at), b.seconds-a.seconds, b.source
	})
	g.obs.CPU = samples
}
