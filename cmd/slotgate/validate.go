package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/slotgate/slotgate/impl/client"
	locality "github.com/slotgate/slotgate/validate"
	runtimetwin "github.com/slotgate/slotgate/validate/locality"
)

// commandTable is the validator's command table: the server's (addr, or a throwaway
// valkey-server started from bin), else the hand table with the reason on stderr.
// Disagreements between the hand table and a server's are printed as warnings.
func commandTable(addr, bin string, hand bool, stderr io.Writer) *locality.Table {
	if hand {
		return locality.Hand("--hand")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if addr == "" {
		a, stop, err := startThrowawayServer(ctx, bin)
		if err != nil {
			fmt.Fprintf(stderr, "validate: no server for the command table (%v): using the hand table\n", err)
			return locality.Hand(err.Error())
		}
		defer stop()
		addr = a
	}
	t, err := readServerTable(ctx, addr)
	if err != nil {
		fmt.Fprintf(stderr, "validate: %v: using the hand table\n", err)
		return locality.Hand(err.Error())
	}
	for _, d := range t.Agree(locality.Hand("")) {
		fmt.Fprintf(stderr, "validate: warning: hand table disagrees with the server: %s\n", d)
	}
	return t
}

func readServerTable(ctx context.Context, addr string) (*locality.Table, error) {
	p, err := client.NewPool(ctx, client.Options{Backend: client.BackendGoRedis, Mode: client.ModeSingle, Addrs: []string{addr}, ClientName: "slotgate-validate"})
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", addr, err)
	}
	defer p.Close()
	return runtimetwin.ServerTable(ctx, p, addr)
}

// startThrowawayServer starts a standalone valkey-server on a free loopback port with no
// persistence, waits until it accepts connections, and returns its address and a stop.
func startThrowawayServer(ctx context.Context, bin string) (string, func(), error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", nil, fmt.Errorf("find %s: %w", bin, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("pick a port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "slotgate-validate-")
	if err != nil {
		return "", nil, fmt.Errorf("temp dir: %w", err)
	}
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start %s: %w", path, err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return addr, stop, nil
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, fmt.Errorf("%s on %s did not accept connections: %w", path, addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

const validateHelp = `Usage: slotgate validate [--sarif] [--server|--endpoint host:port | --valkey-server path | --hand] [dir ...]

The static locality validator (spec 000 §Conformance, "Locality contract"; Axiom A2),
over every .lua file and non-test .go file under each dir (default ./impl); testdata,
vendor and dot directories are skipped below each dir.

Lua (and Lua embedded in Go string literals): every redis.call / redis.pcall must take
its key arguments from KEYS. A key from ARGV, a literal, or a variable not provably bound
to KEYS[n] bypasses the server's slot check and breaks silently once slots split.
  -- slotgate:allow lua/unknown-command <why>   declare a command the key table lacks
  -- slotgate:allow lua/dynamic-command <why>   declare a computed command name
(on the line of the call or the line above; undeclared key access is never waivable).

Go: every multi-key command, script call (client.RunScript, EVAL/EVALSHA, go-redis
Eval*/Script.Run, valkey-go builders), pipeline and MULTI/EXEC transaction must carry
keys that are provably one slot (one hash tag), followed through []string literals,
local and package variables and append. Otherwise the call site declares, on its line
or the line above (or above the key slice's literal), with a reason:
  //slotgate:same-slot <why>            the keys share a slot for a reason not visible here
  //slotgate:per-key-scatter <how>      pipelines only: keys may span slots; <how> says how
                                        a partial failure is reported per key
  //slotgate:disabled-mode-only <why>   deliberately cross-slot, legal only with cluster
                                        mode disabled (A/B scripts, backfill, reverse merge)
The runtime twin (validate/locality) checks the actual keys of every call at run time.

Command table: where each command's keys are comes from the server itself — the COMMAND
reply (key specs: first, last, step; movablekeys) of --server, or of a throwaway
standalone valkey-server this command starts (--valkey-server, default from PATH) and
stops. Only when no server is reachable (or with --hand) does it fall back to the hand
table in validate/commands.go, saying so on stderr; rows/locality proves that table
agrees with the server's key specs.

A key slice built at run time — appended to in a loop, written element by element, or
not visible in the function at all (a parameter, a field, a function's result) — is
unproven: the call site declares it with one of the annotations above, else
go/runtime-keys (unless every key it can hold carries one literal hash tag).

Output: one "file:line: rule: message" per finding, or SARIF 2.1.0 JSON with --sarif.
Exit codes: 0 clean · 1 findings · 2 bad input (e.g. a dir that does not exist).

Flags:
`

// errFindings makes `slotgate validate` exit 1 when any locality finding was reported.
var errFindings = errors.New("locality findings")

// cmdValidate runs the static locality validator (spec 000 A2, Locality contract) over dirs and prints what
// it found; findings return errFindings (exit 1), an unknown dir errUsage (exit 2).
func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sarif := fs.Bool("sarif", false, "write SARIF 2.1.0 JSON to stdout instead of text")
	server := fs.String("server", "", "read the command table from this Valkey (host:port)")
	fs.StringVar(server, "endpoint", "", "same as --server")
	valkeyServer := fs.String("valkey-server", "valkey-server", "binary of the throwaway standalone server started to read the command table when --server is not given")
	hand := fs.Bool("hand", false, "use the hand command table (no server)")
	fs.Usage = func() { fmt.Fprint(stderr, validateHelp); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fmt.Errorf("%w: %v (see slotgate validate --help)", errUsage, err)
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		dirs = []string{"./impl"}
	}
	table := commandTable(*server, *valkeyServer, *hand, stderr)
	start := time.Now()
	res, err := table.Dirs(dirs)
	if err != nil {
		if errors.Is(err, locality.ErrBadInput) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	if *sarif {
		if err := locality.WriteSARIF(stdout, res.Findings); err != nil {
			return fmt.Errorf("write sarif: %w", err)
		}
	} else {
		for _, f := range res.Findings {
			fmt.Fprintln(stdout, f)
		}
	}
	fmt.Fprintf(stderr, "validate: %d file(s), %d finding(s) in %s (command table: %s)\n", res.Files, len(res.Findings), time.Since(start).Round(time.Microsecond), table.Source)
	if len(res.Findings) > 0 {
		return fmt.Errorf("%w: %d in %d file(s)", errFindings, len(res.Findings), res.Files)
	}
	return nil
}
