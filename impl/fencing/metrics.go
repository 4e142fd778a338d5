package fencing

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// PodMetrics is one pod's metrics registry: its own, never the global one,
// so many simulated pods can live in one process.
type PodMetrics struct {
	Registry *prometheus.Registry
	phase    prometheus.Gauge
}

// NewPodMetrics registers the phase gauge on a fresh registry for pod.
func NewPodMetrics(pod string) *PodMetrics {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        PhaseGaugeName,
		Help:        "Fencing script phase this pod runs: 0=O, 1=A, 2=B, 3=C.",
		ConstLabels: prometheus.Labels{"pod": pod},
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	return &PodMetrics{Registry: reg, phase: g}
}

// SetPhase exports p.
func (m *PodMetrics) SetPhase(p Phase) { m.phase.Set(float64(p.Index())) }

// ReadPhase scrapes the registry and decodes the gauge, as a gate would.
func (m *PodMetrics) ReadPhase() (Phase, error) {
	families, err := m.Registry.Gather()
	if err != nil {
		return "", fmt.Errorf("gather metrics: %w", err)
	}
	for _, f := range families {
		if f.GetName() != PhaseGaugeName || len(f.GetMetric()) != 1 {
			continue
		}
		v := f.GetMetric()[0].GetGauge().GetValue()
		if p, ok := PhaseFromIndex(int(v)); ok && float64(int(v)) == v {
			return p, nil
		}
		return "", fmt.Errorf("%s = %v is not a phase", PhaseGaugeName, v)
	}
	return "", fmt.Errorf("%s not exported", PhaseGaugeName)
}
