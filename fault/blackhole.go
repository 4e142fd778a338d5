package fault

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/slotgate/slotgate/fixtures"
)

// Blackhole makes a node's client address a host that answers no SYN for
// Duration, then heals it: spec 000 §Client Architecture ("a dead primary
// halts dispatch") in its worst network form, where a dial is neither
// refused nor reset but simply never completes, so only the client's dial
// timeout ends it.
//
// How: the node's proxy is stopped (every client connection through it is
// cut, so the client must dial again) and its port is taken by a listener
// that never accepts, whose accept queue is shrunk to one entry
// (listen(2) backlog 0) and filled by the fault itself. Linux drops a SYN
// to a listener whose accept queue is full (tcp_conn_request: "listen
// overflow"), whatever tcp_syncookies says, so from the client's side the
// port behaves exactly like a SYN-blackholed host: connect(2) retransmits
// its SYN until the caller's timeout, no RST, no refusal. A toxiproxy
// `timeout` toxic would accept the TCP connection and then stall it: that
// is a read timeout, not a dial timeout, and is not what this fault is for.
//
// Inject confirms the blackhole before it counts the window open: a probe
// dial must time out (neither connect nor be refused); a port another
// process took meanwhile, or a kernel that answers the SYN, is an error.
// The node itself and its cluster bus are untouched: the cluster keeps the
// node as the slot owner (no failover), so every call on its slots must
// fail, and fail within the client's bound.
type Blackhole struct {
	Node     string
	Duration time.Duration
}

// Name implements Fault.
func (f Blackhole) Name() string { return "link/blackhole" }

// Available implements Fault.
func (f Blackhole) Available(t *fixtures.Topology) error {
	nodes, err := pick(t, []string{f.Node})
	if err != nil {
		return err
	}
	if nodes[0].Proxy() == nil {
		return fmt.Errorf("%s has no client proxy to blackhole: %w", f.Node, errors.ErrUnsupported)
	}
	return nil
}

// blackholeProbe is how long the confirming dial waits for an answer.
const blackholeProbe = 300 * time.Millisecond

// Inject implements Fault: it returns once the blackhole healed (the proxy
// listens again).
func (f Blackhole) Inject(ctx context.Context, t *fixtures.Topology) (Window, error) {
	nodes, err := pick(t, []string{f.Node})
	if err != nil {
		return Window{}, err
	}
	n := nodes[0]
	addr := n.Addr()
	n.DisableProxy()
	start := time.Now()
	hole, err := openBlackhole(ctx, addr)
	if err != nil {
		return Window{}, errors.Join(err, n.EnableProxy())
	}
	w := Window{Fault: f.Name(), Target: n.Name(), Start: start}
	select {
	case <-time.After(f.Duration):
	case <-ctx.Done():
	}
	hole.close()
	if err := n.EnableProxy(); err != nil {
		return w, fmt.Errorf("re-enable proxy of %s: %w", n.Name(), err)
	}
	w.End = time.Now()
	return w, ctx.Err()
}

// blackhole is a listener that never accepts and the connections that fill
// its accept queue.
type blackhole struct {
	l     net.Listener
	fills []net.Conn
}

func (b *blackhole) close() {
	for _, c := range b.fills {
		_ = c.Close()
	}
	_ = b.l.Close()
}

// openBlackhole listens on addr with a one-entry accept queue, fills it and
// confirms that a further dial times out.
func openBlackhole(ctx context.Context, addr string) (*blackhole, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("blackhole %s: take the port: %w", addr, err)
	}
	b := &blackhole{l: l}
	rc, err := l.(*net.TCPListener).SyscallConn()
	if err != nil {
		b.close()
		return nil, fmt.Errorf("blackhole %s: %w", addr, err)
	}
	var lerr error
	// A second listen(2) on a listening socket only changes its backlog.
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), 0) }); err != nil || lerr != nil {
		b.close()
		return nil, fmt.Errorf("blackhole %s: shrink the accept queue: %w", addr, errors.Join(err, lerr))
	}
	// Fill the queue until a dial goes unanswered: that dial is the
	// confirmation. Backlog 0 holds one connection; a few more tries
	// cover a kernel that counts differently.
	d := net.Dialer{Timeout: blackholeProbe}
	for range 4 {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			b.fills = append(b.fills, c)
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			return b, nil
		}
		b.close()
		return nil, fmt.Errorf("blackhole %s: the probe dial was answered: %w", addr, err)
	}
	b.close()
	return nil, fmt.Errorf("blackhole %s: %d dials connected, the accept queue never filled", addr, len(b.fills))
}
