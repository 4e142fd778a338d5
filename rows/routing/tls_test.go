package routing_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/slotgate/slotgate/check"
	"github.com/slotgate/slotgate/fixtures"
	"github.com/slotgate/slotgate/history"
	"github.com/slotgate/slotgate/impl/client"
	"github.com/slotgate/slotgate/impl/fencing"
	"github.com/slotgate/slotgate/impl/slot"
	"github.com/slotgate/slotgate/report"
	"github.com/slotgate/slotgate/suites/harness"
)

// Spec 000 §Conformance, Routing: "TLS/auth on the configuration endpoint".
// A cluster of its own, TLS-only (mutual TLS, cluster bus and replication
// included) with ACL users, reached through the same TCP proxies as every
// other topology: the right credentials work with both backends, and every
// wrong one is refused with its own, named error.

// The ACL users of the secure topology.
var (
	appUser = fixtures.ACLUser{Name: "relay-app", Password: "app-secret", Rules: []string{"~*", "&*", "+@all", "-@scripting"}}
	// scriptUser may run the fencing scripts.
	scriptUser = fixtures.ACLUser{Name: "relay-fencing", Password: "fencing-secret", Rules: []string{"~*", "&*", "+@all"}}
	// laxUser is the negative control's user: meant to be the app user,
	// with the -@scripting rule forgotten.
	laxUser = fixtures.ACLUser{Name: "relay-app-lax", Password: "lax-secret", Rules: []string{"~*", "&*", "+@all"}}
)

// Refusal kinds of the connection step, beside the server's error codes
// (WRONGPASS, NOAUTH, NOPERM): what a client sees when TLS stops it.
const (
	kindUnknownAuthority  = "tls-unknown-authority"    // the server's certificate is not signed by a trusted CA
	kindHostnameMismatch  = "tls-hostname-mismatch"    // the certificate does not name the host dialled
	kindCertRequired      = "tls-certificate-required" // the server demands a client certificate (tls-auth-clients)
	kindClosedBeforeReply = "closed-before-reply"      // plain RESP to a TLS port: the server drops the connection unanswered
)

// connKind names why a connection attempt failed, by error type: the
// server's error code, a certificate verification failure, the server's TLS
// alert, or a connection dropped before any reply.
func connKind(err error) string {
	if err == nil {
		return ""
	}
	if k := client.KindOf(err); k != "" && k != client.KindOther {
		return string(k)
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		return kindUnknownAuthority
	}
	var he x509.HostnameError
	if errors.As(err, &he) {
		return kindHostnameMismatch
	}
	// A TLS alert from the peer arrives as net.OpError{Op: "remote error"}
	// around crypto/tls's unexported alert type, whose text is AlertError's.
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && op.Err.Error() == tls.AlertError(116).Error() {
		return kindCertRequired
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return kindClosedBeforeReply
	}
	return "other"
}

// certRequiredLog is what Valkey logs (as a warning) when it refuses a TLS
// client that presented no certificate.
const certRequiredLog = "peer did not return a certificate"

// serverRefusals counts lines holding text in every node's server log.
func serverRefusals(t *fixtures.Topology, text string) int {
	n := 0
	for _, node := range t.Nodes() {
		b, err := os.ReadFile(node.LogPath())
		if err != nil {
			continue
		}
		n += strings.Count(string(b), text)
	}
	return n
}

// startSecure starts the TLS+ACL topology and registers its teardown.
func startSecure(ctx context.Context) *fixtures.Topology {
	GinkgoHelper()
	s, err := fixtures.ParseSpec(cfg.Topology)
	Expect(err).NotTo(HaveOccurred())
	began := time.Now()
	opts := []fixtures.Option{fixtures.WithServer(cfg.Server), fixtures.WithTLS(), fixtures.WithACL(appUser, scriptUser, laxUser),
		fixtures.WithLogger(func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, format+"\n", args...) })}
	if cfg.PortLo != 0 {
		opts = append(opts, fixtures.WithPortRange(cfg.PortLo, cfg.PortHi))
	}
	t, err := fixtures.Run(ctx, s, opts...)
	if t != nil {
		DeferCleanup(t.Close)
	}
	Expect(err).NotTo(HaveOccurred(), "start %s with TLS and ACL", cfg.Topology)
	fmt.Fprintf(os.Stderr, "  %s (TLS, ACL) up in %v\n", cfg.Topology, time.Since(began).Round(time.Millisecond))
	return t
}

// connCase is one way a client may present itself to the secure topology.
type connCase struct {
	name string
	user fixtures.ACLUser
	tls  func(m *fixtures.TLSMaterial) *tls.Config
	want string // "" = must work; else the refusal kind
	why  string
}

// wrongCA is a client configuration that trusts a CA of its own, not the
// topology's, but presents the right client certificate.
func wrongCA(m *fixtures.TLSMaterial) *tls.Config {
	other, err := fixtures.NewCA("some other CA")
	Expect(err).NotTo(HaveOccurred())
	c := m.ClientConfig()
	c.RootCAs = other.CAPool
	return c
}

var connCases = []connCase{
	{name: "right-credentials", user: appUser, tls: (*fixtures.TLSMaterial).ClientConfig, why: "the app user over verified mutual TLS"},
	{name: "wrong-password", user: fixtures.ACLUser{Name: appUser.Name, Password: "not-the-password"}, tls: (*fixtures.TLSMaterial).ClientConfig, want: string(client.KindWrongPass)},
	{name: "unknown-user", user: fixtures.ACLUser{Name: "nobody", Password: appUser.Password}, tls: (*fixtures.TLSMaterial).ClientConfig, want: string(client.KindWrongPass)},
	{name: "no-credentials", tls: (*fixtures.TLSMaterial).ClientConfig, want: string(client.KindNoAuth)},
	{name: "no-tls", user: appUser, tls: func(*fixtures.TLSMaterial) *tls.Config { return nil }, want: kindClosedBeforeReply},
	{name: "wrong-ca", user: appUser, tls: wrongCA, want: kindUnknownAuthority},
	{name: "wrong-server-name", user: appUser, tls: func(m *fixtures.TLSMaterial) *tls.Config {
		c := m.ClientConfig()
		c.ServerName = "not-this-cluster.example"
		return c
	}, want: kindHostnameMismatch},
	{name: "no-client-certificate", user: appUser, tls: func(m *fixtures.TLSMaterial) *tls.Config {
		c := m.ClientConfig()
		c.Certificates = nil
		return c
	}, want: kindCertRequired},
}

// connect opens a cluster pool on t as c and, when it opens, writes and
// reads a key on every shard. The outcome is the first failure's kind.
func connect(ctx context.Context, b client.Backend, t *fixtures.Topology, user fixtures.ACLUser, tc *tls.Config) history.OpOutcome {
	GinkgoHelper()
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: t.Addrs(), Username: user.Name, Password: user.Password, TLS: tc, ClientName: "slotgate-tls", DialTimeout: 2 * time.Second})
	if err == nil {
		defer p.Close()
		for i := range 3 {
			k := fmt.Sprintf("tls:{s%d}:k", i*5461)
			if _, err = p.Do(ctx, client.NewCmd("SET", []string{k}, "v")); err != nil {
				break
			}
			if _, err = p.Do(ctx, client.NewCmd("GET", []string{k})); err != nil {
				break
			}
		}
	}
	o := history.OpOutcome{Op: "connect and SET/GET", ErrKind: connKind(err)}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

// throughProxy dials one node's proxy with TLS as a client library does
// (ServerName left to the dialled host) and describes what it verified.
func throughProxy(ctx context.Context, n *fixtures.Node, m *fixtures.TLSMaterial) string {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: m.ClientConfig()}
	c, err := d.DialContext(ctx, "tcp", n.Addr())
	if err != nil {
		return fmt.Sprintf("TLS through %s's proxy %s failed: %v", n.Name(), n.Addr(), err)
	}
	defer c.Close()
	st := c.(*tls.Conn).ConnectionState()
	return fmt.Sprintf("TLS through %s's proxy %s (a TCP proxy: the handshake is the server's): %s, server name %q verified against certificate %q (IP SANs %v, DNS %v), %d verified chain(s) to %q",
		n.Name(), n.Addr(), tls.VersionName(st.Version), st.ServerName, st.PeerCertificates[0].Subject.CommonName, st.PeerCertificates[0].IPAddresses, st.PeerCertificates[0].DNSNames, len(st.VerifiedChains), m.CA.Subject.CommonName)
}

func tlsAuth(ctx SpecContext, b client.Backend, t *fixtures.Topology) report.Check {
	m := t.TLS()
	ev := harness.Evidence(cfg, t, nil)
	ev.Topology += " (TLS-only, mutual, tls-cluster, tls-replication; ACL, default user off)"
	ev.Metrics = map[string]float64{}
	var results []check.Result
	for _, c := range connCases {
		By(fmt.Sprintf("%s: %s", c.name, b))
		began := time.Now()
		logged := serverRefusals(t, certRequiredLog)
		o := connect(ctx, b, t, c.user, c.tls(m))
		o.Op = c.name
		if c.want == kindCertRequired && o.ErrKind == kindClosedBeforeReply && serverRefusals(t, certRequiredLog) > logged {
			// NOTE: under TLS 1.3 the server checks the client's certificate
			// after the client's handshake is done; the client's first
			// command is then unread when the server closes, the close
			// becomes a reset, and the certificate_required alert in flight
			// is lost with it (1 in a few runs on a loaded runner, through
			// the proxy). The refusal still happened — the server's own log
			// names the reason, so that is the kind.
			o.ErrKind = kindCertRequired
			o.Err += " (alert lost with the reset; the server logged: " + certRequiredLog + ")"
		}
		ev.Metrics[c.name+"_ms"] = float64(time.Since(began).Milliseconds())
		if c.want == "" {
			results = append(results, check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: []history.OpOutcome{o}, MinOps: 1}))
			ev.Observed = append(ev.Observed, fmt.Sprintf("%s (%s): connected, SET/GET on every shard", c.name, c.why))
			continue
		}
		results = append(results, check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: []history.OpOutcome{o}, Want: c.want}))
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: refused as %s — %s", c.name, o.ErrKind, o.Err))
	}
	ev.Observed = append(ev.Observed, throughProxy(ctx, t.Primaries()[0], m))
	result := check.All("tls-auth", results...)

	By("negative control: InsecureSkipVerify against a server no trusted CA signed")
	insecure := wrongCA(m)
	insecure.InsecureSkipVerify = true
	o := connect(ctx, b, t, appUser, insecure)
	o.Op = "wrong-ca+InsecureSkipVerify"
	ctl := harness.Variant("insecure-skip-verify", "a client that trusts the wrong CA but skips verification: it connects to any server that answers, so a wrong CA goes unnoticed", check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: []history.OpOutcome{o}, Want: kindUnknownAuthority}))
	if o.ErrKind == "" {
		ev.Observed = append(ev.Observed, "FINDING: with InsecureSkipVerify the client connected and wrote to a cluster whose certificate its CA did not sign — the wrong-CA refusal depends on verification staying on")
	}
	return harness.Check(row, report.ColumnErrors, "", result, ev, ctl)
}

// scriptOutcomes runs every fencing script (C phase) as user and records
// each outcome.
func scriptOutcomes(ctx context.Context, b client.Backend, t *fixtures.Topology, user fixtures.ACLUser, name string) []history.OpOutcome {
	GinkgoHelper()
	p, err := client.NewPool(ctx, client.Options{Backend: b, Mode: client.ModeCluster, Addrs: t.Addrs(), Username: user.Name, Password: user.Password, TLS: t.TLS().ClientConfig(), ClientName: "slotgate-tls-scripts"})
	Expect(err).NotTo(HaveOccurred(), "connect as %s", user.Name)
	defer p.Close()
	dir := fencing.New(p, fencing.Options{Scripts: cfg.ScriptSet().Phase(fencing.C), LeaseTTL: 10 * time.Second})
	var out []history.OpOutcome
	rec := func(op string, err error) {
		o := history.OpOutcome{Op: user.Name + " " + op, ErrKind: connKind(err)}
		if err != nil {
			o.Err = err.Error()
		}
		out = append(out, o)
	}
	for _, s := range harness.Sessions(cfg.Rand(name), "tls", 3) {
		a, err := dir.Acquire(ctx, s, "pod-a")
		rec("acquire "+s.String(), err)
		_, err = dir.Renew(ctx, s, "pod-a", a.Generation)
		rec("renew", err)
		_, err = dir.ValidateFencedHeader(ctx, s, "pod-a", a.Generation)
		rec("validate", err)
		_, err = dir.Lookup(ctx, s)
		rec("lookup", err)
		_, err = dir.Release(ctx, s, "pod-a", a.Generation)
		rec("release", err)
	}
	return out
}

func aclScripts(ctx SpecContext, b client.Backend, t *fixtures.Topology) report.Check {
	name := "routing/acl-scripts/" + string(b)
	ev := harness.Evidence(cfg, t, nil)
	ev.Topology += " (TLS-only, ACL)"
	By(fmt.Sprintf("%s (%v) runs the fencing scripts", appUser.Name, appUser.Rules))
	app := scriptOutcomes(ctx, b, t, appUser, name)
	By(fmt.Sprintf("%s (%v) runs the fencing scripts", scriptUser.Name, scriptUser.Rules))
	full := scriptOutcomes(ctx, b, t, scriptUser, name)
	result := check.All("acl-scripts", check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: app, Want: string(client.KindNoPerm)}), check.NoErrorsCheck.Judge(check.NoErrorsInput{Outcomes: full, MinOps: len(full)}))
	ev.Metrics = map[string]float64{"app_script_calls": float64(len(app)), "fencing_user_script_calls": float64(len(full))}
	if len(app) > 0 {
		ev.Observed = append(ev.Observed, fmt.Sprintf("%s: %s", app[0].Op, app[0].Err))
	}
	ev.Observed = append(ev.Observed, fmt.Sprintf("the fencing key pairs share a slot (KEYSLOT %d for the first session), so a refusal here is the ACL's, not CROSSSLOT", slot.Of(fencing.NewKeys(harness.Sessions(cfg.Rand(name), "tls", 1)[0]).Lease)))
	By("negative control: the app user's ACL with -@scripting forgotten")
	lax := scriptOutcomes(ctx, b, t, laxUser, name)
	return harness.Check(row, report.ColumnErrors, "", result, ev,
		harness.Variant("acl-without-scripting-deny", "an app user whose rules forgot -@scripting: it can run (and, buggy, corrupt) the fencing scripts", check.RefusedWithCheck.Judge(check.RefusedWithInput{Outcomes: lax, Want: string(client.KindNoPerm)})))
}

var _ = Describe("routing over TLS with ACL users", Ordered, func() {
	var secure *fixtures.Topology
	BeforeAll(func(ctx SpecContext) { secure = startSecure(ctx) })
	for _, b := range harness.BackendsFromEnv() {
		harness.Emit(
			harness.Scenario{
				Name: "routing/tls-auth/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "right credentials work over TLS; wrong password, unknown user, no credentials, no TLS, wrong CA, wrong server name and no client certificate are each refused with their own error (000 §Conformance, Routing: TLS/auth on the configuration endpoint)",
				Run:  func(ctx SpecContext) report.Check { return tlsAuth(ctx, b, secure) },
			},
			harness.Scenario{
				Name: "routing/acl-scripts/" + string(b), Row: row, Column: report.ColumnErrors,
				Spec: "an ACL user without script rights is refused NOPERM on every fencing script while the fencing user runs them (000 §Conformance, Routing: TLS/auth; §The Fencing Migration)",
				Run:  func(ctx SpecContext) report.Check { return aclScripts(ctx, b, secure) },
			},
		)
	}
})
