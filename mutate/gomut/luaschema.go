package gomut

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/mutate/luamut"
	"github.com/slotgate/slotgate/report"
)

// Why embedded-Lua schemata (Lua mutants for every script in
// impl/fencing/lua/ and the other embedded scripts): the fencing scripts
// are a script set the suites reload from SLOTGATE_SCRIPTS, but Marconi's
// session scripts (impl/marconi/lua) and the audit append script
// (impl/marconi/audit/lua) are //go:embed'ed into their packages and read
// once, when a SessionStore or a Writer is made. There is no directory to
// swap, so their mutants ride the Go mutant schemata instead: the copy of
// the module gets, per package, one generated file holding every mutated
// script keyed by mutant id, and every client.NewScript(name, src) call of
// the package becomes client.NewScript(name, script.Source(src, …)), which
// serves the active mutant's script when src is the script it mutates.
// One build of each suite then serves every Lua mutant (SLOTGATE_MUTANT
// picks one), the no-mutant baseline proves the wrap changes nothing, and
// the Go coverage of the call that runs the script (LuaTarget.Runs) says
// which specs ran it. The working tree's impl is never written.

// LuaTarget is one embedded script and where its package runs it.
type LuaTarget struct {
	// Package is the module-relative directory, e.g. "impl/marconi".
	Package string
	// Script is the embedded file, package-relative: "lua/register.lua".
	Script string
	// Runs is the function that runs the script ("Type.Name"): the specs
	// whose baseline reached its client.RunScript call are the ones that
	// ran the script, so they are the ones a mutant runs.
	Runs string
	// Rows are the rows whose suites construct and run it.
	Rows []report.RowID
}

// The rows that run Marconi's session scripts (the SessionStore: register
// on connect, heartbeat, release on disconnect, the master flip) and the
// audit append script (the stream writer; loss-budget cuts a primary's
// proxy mid-append, the unknown outcomes the script's dedupe is for;
// marconi-metrics judges the writer's appended count against the stream).
var (
	marconiStoreRows = []report.RowID{report.RowMarconiRestart, report.RowMarconiCacheLifecycle, report.RowMarconiStageFlags}
	marconiAuditRows = []report.RowID{report.RowMarconiAuditCompleteness, report.RowMarconiStream, report.RowMarconiLossBudget, report.RowMarconiMetrics}
)

// DefaultLuaTargets are the embedded scripts outside the fencing set.
var DefaultLuaTargets = []LuaTarget{
	{Package: "impl/marconi", Script: "lua/register.lua", Runs: "SessionStore.Register", Rows: marconiStoreRows},
	{Package: "impl/marconi", Script: "lua/heartbeat.lua", Runs: "SessionStore.Heartbeat", Rows: marconiStoreRows},
	{Package: "impl/marconi", Script: "lua/release.lua", Runs: "SessionStore.Release", Rows: marconiStoreRows},
	{Package: "impl/marconi", Script: "lua/master.lua", Runs: "SessionStore.SetMaster", Rows: marconiStoreRows},
	{Package: "impl/marconi/audit", Script: "lua/append.lua", Runs: "tenantWriter.append", Rows: marconiAuditRows},
}

// LuaMutant is one mutant of an embedded script.
type LuaMutant struct {
	luamut.Mutant // File is module-relative: impl/marconi/lua/register.lua
	// Cover is what coverage judges it by: File is the Go file holding
	// the client.RunScript call that runs the script, Span that call and
	// FuncSpan its function (Profile.Reaches). ID is the Lua mutant's.
	Cover Mutant
	// Served is the sha1 of the mutated script, as EVALSHA names it: a
	// run must report it served (script.EnvServed) or it ran the
	// original.
	Served string
	Rows   []report.RowID
}

// LuaMutantsFile is the generated file, per package, that holds the
// mutated scripts in a schemata copy.
const LuaMutantsFile = "zz_slotgate_lua_mutants.go"

// luaMapVar is the generated map's name (script.Source's second argument).
const luaMapVar = "slotgateLuaMutants"

// scriptAlias is the name the wrapped files and the generated file import
// SchemaPkg's script package (mutate/schema/script) under.
const scriptAlias = "slotgatescript"

// scriptPkg is the import path of SchemaPkg's script package.
func scriptPkg(sp SchemaPkg) string { return sp.Path + "/script" }

// GenerateLuaSchemata generates every luamut mutant of targets' scripts
// and the schemata that serve them: for each package, the generated file
// and its Go files with every client.NewScript source wrapped (only the
// files that call it). Pure: it reads root, writes nothing. A package
// with no client.NewScript call, or a Runs function with no
// client.RunScript call, is an error: its mutants could never be served
// or covered.
func GenerateLuaSchemata(root string, targets []LuaTarget, sp SchemaPkg) ([]LuaMutant, *Schemata, error) {
	s := &Schemata{Files: map[string][]byte{}, In: map[string]bool{}, Fallback: map[string]string{}, pos: map[string]*posMap{}}
	var out []LuaMutant
	byPkg := map[string][]LuaMutant{}
	originals := map[string]string{}
	var pkgs []string
	for _, t := range targets {
		rel := path.Join(t.Package, t.Script)
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, nil, fmt.Errorf("lua schemata: %w", err)
		}
		originals[rel] = string(src)
		osum := sha1.Sum(src)
		origSum := hex.EncodeToString(osum[:])
		ms, err := luamut.Generate(rel, string(src))
		if err != nil {
			return nil, nil, fmt.Errorf("lua schemata: %w", err)
		}
		cover, err := runSite(root, t.Package, t.Runs)
		if err != nil {
			return nil, nil, fmt.Errorf("lua schemata %s: %w", rel, err)
		}
		if !containsStr(pkgs, t.Package) {
			pkgs = append(pkgs, t.Package)
		}
		for _, m := range ms {
			sum := sha1.Sum([]byte(m.Source))
			c := cover
			c.ID, c.Operator, c.Rows, c.Served, c.Original = m.ID, string(m.Operator), t.Rows, hex.EncodeToString(sum[:]), origSum
			lm := LuaMutant{Mutant: m, Cover: c, Served: c.Served, Rows: t.Rows}
			out = append(out, lm)
			byPkg[t.Package] = append(byPkg[t.Package], lm)
			s.In[m.ID] = true
		}
	}
	for _, p := range pkgs {
		if err := wrapNewScript(root, p, sp, s); err != nil {
			return nil, nil, fmt.Errorf("lua schemata: %w", err)
		}
		gen, err := luaMutantsSource(root, p, sp, byPkg[p], originals)
		if err != nil {
			return nil, nil, fmt.Errorf("lua schemata: %w", err)
		}
		s.Files[path.Join(p, LuaMutantsFile)] = gen
	}
	return out, s, nil
}

// runSite finds fn's first client.RunScript call in pkg: the coverage
// anchor of the script it runs.
func runSite(root, pkg, fn string) (Mutant, error) {
	files, fset, err := parsePkg(root, pkg)
	if err != nil {
		return Mutant{}, err
	}
	for _, f := range files {
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || funcName(fd) != fn {
				continue
			}
			var call *ast.CallExpr
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && call == nil && isClientCall(f.ast, c, "RunScript") {
					call = c
				}
				return call == nil
			})
			if call == nil {
				return Mutant{}, fmt.Errorf("%s.%s calls no client.RunScript", pkg, fn)
			}
			return Mutant{File: path.Join(pkg, f.name), Func: fn, Line: fset.Position(call.Pos()).Line,
				Span: span(fset, call.Pos(), call.End()), FuncSpan: span(fset, fd.Pos(), fd.End())}, nil
		}
	}
	return Mutant{}, fmt.Errorf("no function %s in %s", fn, pkg)
}

// parsePkg parses pkg's non-test Go files (a schemata file left over from
// nothing: the generated file is never in the working tree).
func parsePkg(root, pkg string) ([]srcFile, *token.FileSet, error) {
	dir := filepath.Join(root, filepath.FromSlash(pkg))
	ms, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(ms)
	fset := token.NewFileSet()
	var out []srcFile
	for _, m := range ms {
		name := filepath.Base(m)
		if strings.HasSuffix(name, "_test.go") || name == LuaMutantsFile {
			continue
		}
		src, err := os.ReadFile(m)
		if err != nil {
			return nil, nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, srcFile{name: name, src: src, ast: f})
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no Go files in %s", pkg)
	}
	return out, fset, nil
}

// clientImport is the import path of the client package whose NewScript
// and RunScript the scripts go through.
const clientImport = "/impl/client"

// isClientCall reports whether c calls <client>.name, client being f's
// import of impl/client.
func isClientCall(f *ast.File, c *ast.CallExpr, name string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || !strings.HasSuffix(p, clientImport) {
			continue
		}
		local := path.Base(p)
		if im.Name != nil {
			local = im.Name.Name
		}
		if local == x.Name {
			return true
		}
	}
	return false
}

// wrapNewScript rewrites every client.NewScript(name, src) of pkg's files
// into client.NewScript(name, script.Source(src, slotgateLuaMutants)), on
// the same lines (a Go mutant's coverage positions stay put), and records
// the rewritten files in s.
func wrapNewScript(root, pkg string, sp SchemaPkg, s *Schemata) error {
	files, fset, err := parsePkg(root, pkg)
	if err != nil {
		return err
	}
	n := 0
	for _, f := range files {
		tf := fset.File(f.ast.Pos())
		var es []sedit
		seq := 0
		ast.Inspect(f.ast, func(nd ast.Node) bool {
			c, ok := nd.(*ast.CallExpr)
			if !ok || !isClientCall(f.ast, c, "NewScript") || len(c.Args) != 2 {
				return true
			}
			seq++
			a := c.Args[1]
			rs, re := tf.Offset(a.Pos()), tf.Offset(a.End())
			es = append(es,
				sedit{at: rs, end: rs, text: scriptAlias + ".Source(", open: true, rs: rs, re: re, seq: seq},
				sedit{at: re, end: re, text: ", " + luaMapVar + ")", rs: rs, re: re, seq: seq})
			return true
		})
		if len(es) == 0 {
			continue
		}
		n += len(es) / 2
		at := tf.Offset(f.ast.Name.End()) // on the package clause's line: no line moves
		es = append(es, sedit{at: at, end: at, text: "; import " + scriptAlias + " " + strconv.Quote(scriptPkg(sp)), open: true, rs: at, re: at, seq: -1})
		out, off := render(f.src, es)
		rel := path.Join(pkg, f.name)
		s.Files[rel] = out
		s.pos[rel] = &posMap{origLines: lineStarts(f.src), newLines: lineStarts(out), off: off}
	}
	if n == 0 {
		return fmt.Errorf("%s makes no client.NewScript: its embedded scripts cannot be served mutated", pkg)
	}
	return nil
}

// luaMutantsSource is the generated file of pkg: every mutant of its
// scripts, keyed by id, with the script it replaces.
func luaMutantsSource(root, pkg string, sp SchemaPkg, ms []LuaMutant, originals map[string]string) ([]byte, error) {
	files, _, err := parsePkg(root, pkg)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by slotgate mutate (embedded-Lua mutant schemata, mutate/gomut); DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\nimport %s %q\n\n", files[0].ast.Name.Name, scriptAlias, scriptPkg(sp))
	// The originals once each, as constants the entries share.
	var scripts []string
	for _, m := range ms {
		if !containsStr(scripts, m.File) {
			scripts = append(scripts, m.File)
		}
	}
	for i, sc := range scripts {
		fmt.Fprintf(&b, "// %s\nconst slotgateLuaOriginal%d = %s\n\n", sc, i, strconv.Quote(originals[sc]))
	}
	fmt.Fprintf(&b, "var %s = map[string]%s.Script{\n", luaMapVar, scriptAlias)
	for _, m := range ms {
		i := 0
		for j, sc := range scripts {
			if sc == m.File {
				i = j
			}
		}
		fmt.Fprintf(&b, "\t%s: {Original: slotgateLuaOriginal%d, Mutated: %s},\n", strconv.Quote(m.ID), i, strconv.Quote(m.Source))
	}
	fmt.Fprintf(&b, "}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated %s: %w", path.Join(pkg, LuaMutantsFile), err)
	}
	return out, nil
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
