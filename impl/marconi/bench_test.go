package marconi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/marconi"
	"github.com/slotgate/slotgate/internal/wait"
)

// benchReceivers is the §2.1 benchmark's population: 1,000 receiver shims
// with a WebSocket attached each.
const benchReceivers = 1000

// BenchmarkSendLatency measures prism_signal end to end on the same-instance
// hot path (spec 002 §2.1: target p99 < 5 ms) with 1,000 receivers
// attached: an HTTP POST from a sender, the routing lookup, the push into
// the recipient's socket queue, the audit Offer, the 200. It reports p50
// and p99 as custom metrics, next to two baselines measured in the same
// process, so the numbers read as ratios on whatever machine runs it:
//
//   - http-noop: the same HTTP round trip to a handler that decodes the
//     same body and answers 200 (the transport's share);
//   - ws-write: one raw WebSocket write of an envelope-sized message
//     (what the delivery itself costs once the send returned).
//
// Not an assertion: `go test -run '^$' -bench SendLatency ./impl/marconi`.
func BenchmarkSendLatency(b *testing.B) {
	topo := standalone(b)
	ctx := context.Background()
	p, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: topo.Addrs()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	m, err := marconi.New(marconi.Options{Pool: p, Sink: marconi.NewMemorySink(), Flags: marconi.ShippedFlags(), Store: marconi.StoreOptions{Prefix: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	var delivered atomic.Int64
	receivers := make([]*marconi.Receiver, benchReceivers)
	keys := make([]marconi.RouteKey, benchReceivers)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range benchReceivers {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s, err := m.Register(ctx, marconi.Session{SessionID: fmt.Sprintf("b%04d", i), Tenant: "acme", Project: "bench", Identity: fmt.Sprintf("r%04d", i)})
			if err != nil {
				b.Error(err)
				return
			}
			keys[i] = s.Route()
			receivers[i], err = marconi.DialReceiver(ctx, srv.URL, s.SessionID, func(marconi.Delivery) { delivered.Add(1) })
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	defer func() {
		for _, r := range receivers {
			_ = r.Close()
		}
	}()

	api := &marconi.Client{BaseURL: srv.URL, HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	payload := bytes.Repeat([]byte("x"), 256)
	send := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		k := keys[i%len(keys)]
		began := time.Now()
		res, err := api.Send(ctx, marconi.SendRequest{Tenant: k.Tenant, Project: k.Project, Recipient: k.Identity, Sender: "bench", Kind: "bench", Payload: payload})
		send = append(send, time.Since(began))
		if err != nil || res.Outcome != "pushed" {
			b.Fatalf("send %d: %+v %v", i, res, err)
		}
	}
	b.StopTimer()
	if err := wait.Within(ctx, 30*time.Second, time.Millisecond, func(context.Context) error {
		if got := delivered.Load(); got < int64(b.N) {
			return fmt.Errorf("delivered %d of %d", got, b.N)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}

	noop := baselineHTTP(b, payload, max(b.N, 200))
	ws := baselineWS(b, payload, max(b.N, 200))
	report := func(name string, d []time.Duration) (p50, p99 time.Duration) {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		p50, p99 = d[len(d)/2], d[min(len(d)-1, len(d)*99/100)]
		b.ReportMetric(float64(p50)/1e3, name+"-p50-µs")
		b.ReportMetric(float64(p99)/1e3, name+"-p99-µs")
		return p50, p99
	}
	_, sp99 := report("send", send)
	_, hp99 := report("http-noop", noop)
	report("ws-write", ws)
	b.ReportMetric(float64(sp99)/float64(max(hp99, 1)), "send/http-noop-p99")
	b.ReportMetric(float64(sp99)/float64(5*time.Millisecond), "p99/5ms-target")
}

// baselineHTTP times n POSTs of the same body to a handler that decodes
// it and answers 200.
func baselineHTTP(b *testing.B, payload []byte, n int) []time.Duration {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req marconi.SendRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"signal_id":"x","outcome":"pushed"}`))
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	body, _ := json.Marshal(marconi.SendRequest{Tenant: "acme", Project: "bench", Recipient: "r0000", Sender: "bench", Kind: "bench", Payload: payload})
	out := make([]time.Duration, 0, n)
	for range n {
		began := time.Now()
		resp, err := hc.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out = append(out, time.Since(began))
	}
	return out
}

// baselineWS times n raw WebSocket writes of an envelope-sized message.
func baselineWS(b *testing.B, payload []byte, n int) []time.Duration {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, _, err := websocket.Dial(ctx, "ws"+srv.URL[len("http"):], &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	msg, _ := json.Marshal(map[string]any{"signal_id": "x", "tenant_id": "acme", "payload": payload})
	out := make([]time.Duration, 0, n)
	for range n {
		began := time.Now()
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(began))
	}
	return out
}
