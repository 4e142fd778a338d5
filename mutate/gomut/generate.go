package gomut

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Stats counts what Generate did: every candidate site, and how many
// mutants type-checked, so a report can say how many were discarded.
type Stats struct {
	// Candidates is every mutation site found in the targets.
	Candidates int
	// Compiled is how many candidates type-check (go/types over the
	// package with the mutated file, against the dependencies' export
	// data, as the compiler would).
	Compiled int
	// Discarded is Candidates - Compiled; DiscardedBy says why.
	Discarded   int
	DiscardedBy map[string]int
	// ByOperator counts the compiled mutants per operator.
	ByOperator map[string]int
	// Equivalent counts compiled mutants with a KnownEquivalent reason.
	Equivalent int
	// Sampled is how many Generate returned (max, or Compiled).
	Sampled int
}

// Generate returns the mutants of targets under the module at root that
// type-check, in a deterministic order (targets, files by name, source
// position, operator), KnownEquivalent ones with their reason. With
// 0 < max < count it returns a sample of at most max non-equivalent mutants
// drawn with seed, still in that order, stratified by target: the targets
// share max as evenly as their mutant counts allow, so a small smoke sample
// still reaches every package.
func Generate(root string, targets []Target, max int, seed int64) ([]Mutant, error) {
	ms, _, err := GenerateStats(root, targets, max, seed)
	return ms, err
}

// GenerateStats is Generate with its counts.
func GenerateStats(root string, targets []Target, max int, seed int64) ([]Mutant, Stats, error) {
	ms, _, st, err := generate(root, targets, max, seed, SchemaPkg{})
	return ms, st, err
}

// GenerateSchemata is Generate with the targets' schemata: every compiled
// mutant of the targets (sampled or not) that can be expressed, switched by
// sp's package (Schemata).
func GenerateSchemata(root string, targets []Target, max int, seed int64, sp SchemaPkg) ([]Mutant, *Schemata, error) {
	ms, sch, _, err := generate(root, targets, max, seed, sp)
	return ms, sch, err
}

func generate(root string, targets []Target, max int, seed int64, sp SchemaPkg) ([]Mutant, *Schemata, Stats, error) {
	st := Stats{DiscardedBy: map[string]int{}, ByOperator: map[string]int{}}
	modPath, err := modulePath(root)
	if err != nil {
		return nil, nil, st, err
	}
	var sch *Schemata
	if sp.Path != "" {
		sch = &Schemata{Files: map[string][]byte{}, In: map[string]bool{}, Fallback: map[string]string{}, pos: map[string]*posMap{}}
	}
	var all []Mutant
	var per [][]int // indexes into all, per target
	for _, t := range targets {
		ms, err := generatePackage(root, modPath, t, &st, sp, sch)
		if err != nil {
			return nil, nil, st, fmt.Errorf("mutate %s: %w", t.Package, err)
		}
		var idx []int
		for _, m := range ms {
			if m.Equivalent == "" {
				idx = append(idx, len(all))
			}
			all = append(all, m)
		}
		per = append(per, idx)
	}
	st.Compiled = len(all)
	st.Discarded = st.Candidates - st.Compiled
	for _, m := range all {
		st.ByOperator[m.Operator]++
		if m.Equivalent != "" {
			st.Equivalent++
		}
	}
	if max > 0 && max < len(all) {
		all = sample(all, per, max, seed)
	}
	st.Sampled = len(all)
	return all, sch, st, nil
}

// sample draws max of the indexes in per (one list per target), spread
// round-robin over the targets, each target's picks drawn with seed.
func sample(all []Mutant, per [][]int, max int, seed int64) []Mutant {
	r := rand.New(rand.NewPCG(uint64(seed), 0x736c6f74)) // "slot"
	pools := make([][]int, len(per))
	for i, idx := range per {
		pools[i] = append([]int(nil), idx...)
		r.Shuffle(len(pools[i]), func(a, b int) { pools[i][a], pools[i][b] = pools[i][b], pools[i][a] })
	}
	var picked []int
	for len(picked) < max {
		progress := false
		for i := range pools {
			if len(pools[i]) == 0 || len(picked) == max {
				continue
			}
			picked = append(picked, pools[i][0])
			pools[i] = pools[i][1:]
			progress = true
		}
		if !progress {
			break
		}
	}
	sort.Ints(picked)
	out := make([]Mutant, len(picked))
	for i, j := range picked {
		out[i] = all[j]
	}
	return out
}

// modulePath reads the module path from root/go.mod.
func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("read go.mod: no module line in %s", root)
}

// srcFile is one parsed non-test file of a target package.
type srcFile struct {
	name string // base name
	src  []byte
	ast  *ast.File
}

// pkgChecker type-checks a package with one file replaced; the imports are
// read from the export data `go list -export` names, so a check is
// milliseconds and needs no build of the package itself.
type pkgChecker struct {
	importPath string
	fset       *token.FileSet
	files      []srcFile
	imp        types.Importer
}

func newChecker(root, modPath, dir string, sp SchemaPkg) (*pkgChecker, error) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("read package: %w", err)
	}
	c := &pkgChecker{importPath: path.Join(modPath, dir), fset: token.NewFileSet()}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(abs, n))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", n, err)
		}
		f, err := parser.ParseFile(c.fset, n, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", n, err)
		}
		c.files = append(c.files, srcFile{name: n, src: src, ast: f})
	}
	if len(c.files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	exports, err := exportData(root, dir)
	if err != nil {
		return nil, err
	}
	base := importer.ForCompiler(c.fset, "gc", func(p string) (io.ReadCloser, error) {
		f, ok := exports[p]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", p)
		}
		return os.Open(f)
	})
	c.imp = &schemaImporter{base: base, fset: c.fset, sp: sp}
	return c, nil
}

// exportData maps every dependency of ./dir to its compiled export data.
func exportData(root, dir string) (map[string]string, error) {
	// cmp and os: what a schema's mutate/schema imports (schemaImporter).
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./"+dir, "cmp", "os")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export ./%s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if p, f, ok := strings.Cut(line, "\t"); ok {
			m[p] = f
		}
	}
	return m, nil
}

// check type-checks the package with file i's source replaced by src (nil:
// unchanged). It returns the first error and, for the original, the
// type information the operators read.
func (c *pkgChecker) check(i int, src []byte) (*types.Info, error) {
	if src == nil {
		return c.checkFiles(nil)
	}
	return c.checkFiles(map[int][]byte{i: src})
}

func generatePackage(root, modPath string, t Target, st *Stats, sp SchemaPkg, sch *Schemata) ([]Mutant, error) {
	c, err := newChecker(root, modPath, t.Package, sp)
	if err != nil {
		return nil, err
	}
	info, err := c.check(0, nil)
	if err != nil {
		return nil, fmt.Errorf("type-check the original: %w", err)
	}
	want := map[string]bool{}
	for _, f := range t.Funcs {
		want[f] = true
	}
	found := map[string]bool{}
	var out []Mutant
	var cands []schemaCand
	for i, f := range c.files {
		rel := path.Join(t.Package, f.name)
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := funcName(fd)
			if len(want) > 0 && !want[name] {
				continue
			}
			found[name] = true
			sites := findSites(c.fset, f.src, fd, info, t.Controls)
			seq := map[string]int{}
			for _, s := range sites {
				st.Candidates++
				key := siteKey(t.Package, name, s)
				seq[key]++
				id := mutantID(t.Package, name, s.op, key, seq[key])
				content, err := applyEdits(f.src, s.edits)
				if err != nil {
					st.DiscardedBy["format"]++
					continue
				}
				if bytes.Equal(content, f.src) {
					st.DiscardedBy["no-op"]++
					continue
				}
				if _, err := c.check(i, content); err != nil {
					st.DiscardedBy["type-check"]++
					continue
				}
				cands = append(cands, schemaCand{id: id, file: i, site: s})
				out = append(out, Mutant{
					ID: id, File: rel, Func: name, Line: c.fset.Position(s.pos).Line, Operator: s.op,
					Span: span(c.fset, s.from, s.to), FuncSpan: span(c.fset, fd.Pos(), fd.End()),
					Diff: unifiedDiff(rel, f.src, content), Content: content,
					Rows: append(t.Rows[:0:0], t.Rows...), Equivalent: KnownEquivalent[id],
				})
			}
		}
	}
	var missing []string
	for f := range want {
		if !found[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("no function %s in %s", strings.Join(missing, ", "), t.Package)
	}
	if sch != nil {
		buildSchemata(c, t.Package, cands, info, sp, sch)
	}
	return out, nil
}

// siteKey is what names a mutant independently of where its function sits:
// the package, the function, the operator, the mutated node's text and
// what the edits write, whitespace-normalised (a function moved within
// its file, to another file of the package, or re-indented keeps its key;
// Mutant.ID).
func siteKey(pkg, fn string, s site) string {
	var b strings.Builder
	for _, part := range []string{pkg, fn, s.op, s.subject} {
		b.WriteString(strings.Join(strings.Fields(part), " "))
		b.WriteByte(0)
	}
	for _, e := range s.edits {
		b.WriteString(strings.Join(strings.Fields(e.text), " "))
		b.WriteByte(0)
	}
	return b.String()
}

// mutantID is "<package>:<Func>:<operator>:<hash of key>", with "#n" for
// the n-th (n > 1) site of one function whose key is the same as an
// earlier one's (the same comparison written twice): the first keeps its
// ID when an identical one is added below it.
func mutantID(pkg, fn, op, key string, n int) string {
	sum := sha256.Sum256([]byte(key))
	id := fmt.Sprintf("%s:%s:%s:%s", pkg, fn, op, hex.EncodeToString(sum[:4]))
	if n > 1 {
		id += "#" + strconv.Itoa(n)
	}
	return id
}

// span is [from, to) as line.column positions.
func span(fset *token.FileSet, from, to token.Pos) Span {
	a, b := fset.Position(from), fset.Position(to)
	return Span{StartLine: a.Line, StartCol: a.Column, EndLine: b.Line, EndCol: b.Column}
}

// funcName is "Name" or "Type.Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// site is one candidate mutant: its operator, where, the edits, and the
// source text of the node it mutates (the subject: a condition, a
// comparison, a statement, a call), which names it in its ID.
type site struct {
	op      string
	pos     token.Pos
	edits   []edit
	subject string
	// from, to are the mutated node's extent in the original file: what a
	// coverage profile must reach for a run to execute the mutant.
	from, to token.Pos
	// node is what the mutant's schema switches (schemaEdits): the
	// condition, comparison, literal, statement or argument the edits
	// change; nil when the mutant has no schema (a removed LIMIT clause
	// changes an argument count).
	node ast.Node
}

var errOverlap = errors.New("overlapping edits")

// applyEdits applies non-overlapping edits and gofmts the result.
func applyEdits(src []byte, edits []edit) ([]byte, error) {
	es := append([]edit(nil), edits...)
	sort.Slice(es, func(i, j int) bool { return es[i].start < es[j].start })
	var b bytes.Buffer
	at := 0
	for _, e := range es {
		if e.start < at {
			return nil, errOverlap
		}
		b.Write(src[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.Write(src[at:])
	return format.Source(b.Bytes())
}

// findSites walks one function (and the closures in it) for every operator's
// sites, in source order.
func findSites(fset *token.FileSet, src []byte, fd *ast.FuncDecl, info *types.Info, controls []string) []site {
	tf := fset.File(fd.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	text := func(n ast.Node) string { return string(src[off(n.Pos()):off(n.End())]) }
	replace := func(n ast.Node, s string) edit { return edit{off(n.Pos()), off(n.End()), s} }

	var sites []site
	add := func(op string, subj, node ast.Node, pos token.Pos, es ...edit) {
		sites = append(sites, site{op: op, pos: pos, edits: es, subject: text(subj), from: subj.Pos(), to: subj.End(), node: node})
	}

	// Nodes whose role depends on their parent, found in a first pass.
	forConds := map[ast.Node]bool{}  // counting-loop conditions: a boundary swap there only indexes out of range
	wholeCond := map[ast.Node]bool{} // an entire if/case condition (negate-cond's, not swap-cmp's)
	inCompound := map[ast.Node]bool{}
	returned := map[ast.Node]bool{} // a comparison returned as the function's verdict
	selectSends := map[ast.Node]bool{}
	controlled := map[ast.Node]bool{} // leaves that only decide while a control is on
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.ForStmt:
			// A while-loop condition is a filter (DiscardThrough's
			// `Seq <= off.Seq`) and is kept; i := 0; i < n; i++ is not.
			if x.Cond != nil && (x.Init != nil || x.Post != nil) {
				ast.Inspect(x.Cond, func(m ast.Node) bool { forConds[m] = true; return true })
			}
		case *ast.ReturnStmt:
			for _, r := range x.Results {
				returned[unparen(r)] = true
			}
		case *ast.IfStmt:
			wholeCond[unparen(x.Cond)] = true
			// `if Mutant == M { … }`: the body runs only under the control.
			if onlyUnderControl(x.Cond, controls) {
				ast.Inspect(x.Body, func(m ast.Node) bool { controlled[m] = true; return true })
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				inCompound[unparen(x.X)] = true
				inCompound[unparen(x.Y)] = true
				// `Mutant == M && leaf`: the leaf only decides while the
				// control is on (likewise `Mutant != M || leaf`), so a
				// mutant of it is a mutant of the control.
				if _, seen := controlled[x]; !seen && gatedByControl(x, controls) {
					ast.Inspect(x, func(m ast.Node) bool { controlled[m] = true; return true })
				}
			}
		case *ast.CommClause:
			if x.Comm != nil {
				selectSends[x.Comm] = true
			}
		}
		return true
	})

	mentionsMutant := func(e ast.Node) bool { return selectsControl(e, controls) }
	negate := func(e ast.Expr) string {
		e = unparen(e)
		if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.NOT {
			return text(u.X)
		}
		switch e.(type) {
		case *ast.Ident, *ast.CallExpr, *ast.SelectorExpr, *ast.IndexExpr:
			return "!" + text(e)
		}
		return "!(" + text(e) + ")"
	}

	var tagless []*ast.SwitchStmt
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if controlled[n] {
			return true // code only a negative control runs
		}
		switch x := n.(type) {
		case *ast.IfStmt:
			if errCheck(x.Cond, info) == nil && !mentionsMutant(x.Cond) {
				add(OpNegateCond, x.Cond, x.Cond, x.Cond.Pos(), replace(x.Cond, negate(x.Cond)))
			}
			if e := errCheck(x.Cond, info); e != nil && x.Else == nil && returns(x.Body) {
				add(OpDropErrReturn, x, x, x.Pos(), replace(x.Body, "{\n}"))
				// What a run must reach to tell this mutant apart is the
				// body, not the if: until an error takes the branch the
				// mutant runs exactly as the original. A spec whose
				// baseline never ran the body cannot kill it (Reaches),
				// and running it cost a survivor's full run (~15–110 s).
				sites[len(sites)-1].from, sites[len(sites)-1].to = x.Body.Pos(), x.Body.End()
			}
		case *ast.SwitchStmt:
			if x.Tag == nil {
				tagless = append(tagless, x)
				for _, cs := range x.Body.List {
					cc := cs.(*ast.CaseClause)
					for _, e := range cc.List {
						if errCheck(e, info) == nil && !mentionsMutant(e) {
							wholeCond[unparen(e)] = true
							add(OpNegateCond, e, e, e.Pos(), replace(e, negate(e)))
						}
					}
				}
			}
		case *ast.BinaryExpr:
			if forConds[x] || controlled[x] || mentionsMutant(x) {
				break
			}
			opEnd := off(x.OpPos) + len(x.Op.String())
			swap := func(to token.Token) {
				add(OpSwapCmp, x, x, x.OpPos, edit{off(x.OpPos), opEnd, to.String()})
			}
			switch x.Op {
			case token.LSS:
				swap(token.LEQ)
			case token.LEQ:
				swap(token.LSS)
			case token.GTR:
				swap(token.GEQ)
			case token.GEQ:
				swap(token.GTR)
			case token.EQL, token.NEQ:
				if (inCompound[x] || returned[x]) && !wholeCond[x] && errCheck(x, info) == nil {
					if x.Op == token.EQL {
						swap(token.NEQ)
					} else {
						swap(token.EQL)
					}
				}
			case token.MUL, token.QUO, token.ADD, token.SUB:
				if !isDuration(info.Types[x].Type) {
					break
				}
				for _, side := range []ast.Expr{x.X, x.Y} {
					lit, ok := unparen(side).(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						continue
					}
					n, err := strconv.ParseInt(lit.Value, 0, 64)
					if err != nil {
						continue
					}
					for _, d := range []int64{-1, 1} {
						v := n + d
						if v <= 0 && (x.Op == token.MUL || x.Op == token.QUO) {
							continue
						}
						add(OpTTLOffByOne, x, lit, lit.Pos(), replace(lit, strconv.FormatInt(v, 10)))
					}
				}
			}
		case *ast.SendStmt:
			if !selectSends[x] {
				add(OpChanDrop, x, x, x.Pos(), replace(x, "select {\ncase "+text(x)+":\ndefault:\n}"))
			}
		case *ast.SelectStmt:
			hasDefault, sends := false, false
			for _, cs := range x.Body.List {
				cc := cs.(*ast.CommClause)
				if cc.Comm == nil {
					hasDefault = true
				}
				if _, ok := cc.Comm.(*ast.SendStmt); ok {
					sends = true
				}
			}
			if sends && !hasDefault {
				rb := off(x.Body.Rbrace)
				add(OpChanDrop, x, x, x.Pos(), edit{rb, rb, "default:\n"})
			}
		case *ast.CallExpr:
			sites = append(sites, boundSites(x, x.Args, x.Ellipsis.IsValid(), text, off)...)
		case *ast.CompositeLit:
			sites = append(sites, boundSites(x, x.Elts, false, text, off)...)
		}
		return true
	})
	sort.SliceStable(sites, func(i, j int) bool { return sites[i].pos < sites[j].pos })
	return sites
}

// rangeBounds are the range commands whose two arguments after the key are
// a min and a max, with the value that makes each unbounded.
var rangeBounds = map[string][2]string{
	"ZRANGEBYSCORE":    {"-inf", "+inf"},
	"ZREVRANGEBYSCORE": {"+inf", "-inf"},
	"ZREMRANGEBYSCORE": {"-inf", "+inf"},
	"ZCOUNT":           {"-inf", "+inf"},
	"XRANGE":           {"-", "+"},
	"XREVRANGE":        {"+", "-"},
}

// boundSites finds the range-query bounds in one argument list: a command
// name literal followed by the key then min and max (client.NewCmd(name,
// keys, min, max) and []string{name, key, min, max} share that layout), and
// LIMIT off count / COUNT n clauses (except SCAN's COUNT, a hint).
func boundSites(subj ast.Node, args []ast.Expr, spread bool, text func(ast.Node) string, off func(token.Pos) int) []site {
	var out []site
	isScan := false
	for i, a := range args {
		s, ok := stringLit(a)
		if !ok {
			continue
		}
		if i == 0 && (s == "SCAN" || s == "SSCAN" || s == "HSCAN" || s == "ZSCAN") {
			isScan = true
		}
		if b, ok := rangeBounds[strings.ToUpper(s)]; ok {
			for k := 0; k < 2; k++ {
				j := i + 2 + k
				if j >= len(args) || (spread && j == len(args)-1) {
					break
				}
				if v, ok := stringLit(args[j]); ok && v == b[k] {
					continue
				}
				out = append(out, site{op: OpDropBound, pos: args[j].Pos(), subject: text(subj), from: subj.Pos(), to: subj.End(), node: args[j],
					edits: []edit{{off(args[j].Pos()), off(args[j].End()), strconv.Quote(b[k])}}})
			}
		}
		n := 0
		switch strings.ToUpper(s) {
		case "LIMIT":
			n = 2
		case "COUNT":
			if !isScan {
				n = 1
			}
		}
		if n == 0 || i+n >= len(args) || (spread && i+n == len(args)-1) {
			continue
		}
		// Rewrite the whole list without the clause, so the commas stay right.
		var keep []string
		for j, b := range args {
			if j < i || j > i+n {
				keep = append(keep, text(b))
			}
		}
		out = append(out, site{op: OpDropBound, pos: a.Pos(), subject: text(subj), from: subj.Pos(), to: subj.End(),
			edits: []edit{{off(args[0].Pos()), off(args[len(args)-1].End()), strings.Join(keep, ", ")}}})
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := unparen(e).(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// errCheck returns X of a condition `X != nil` where X is an error, else nil.
func errCheck(cond ast.Expr, info *types.Info) ast.Expr {
	b, ok := unparen(cond).(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return nil
	}
	if id, ok := unparen(b.Y).(*ast.Ident); !ok || id.Name != "nil" {
		return nil
	}
	t := info.Types[b.X].Type
	if t == nil {
		return nil
	}
	errType := types.Universe.Lookup("error").Type().Underlying().(*types.Interface)
	if !types.Implements(t, errType) {
		return nil
	}
	return b.X
}

// returns reports whether a block ends in a return: a guard, not a handler
// that recovers and goes on.
func returns(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

// selectsControl reports a condition that selects a known-bad variant (the
// rows' negative controls switch on Options.Mutant, or on the names in
// Target.Controls): mutating it tests the controls, not the implementation.
func selectsControl(e ast.Node, controls []string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			found = strings.Contains(strings.ToLower(id.Name), "mutant") || slices.Contains(controls, id.Name)
		}
		return !found
	})
	return found
}

// onlyUnderControl reports a condition true only while a control is on:
// `control == …`, or an && chain with such an operand.
func onlyUnderControl(cond ast.Expr, controls []string) bool {
	switch b := unparen(cond).(type) {
	case *ast.BinaryExpr:
		if b.Op == token.EQL && selectsControl(b, controls) {
			return true
		}
		if b.Op == token.LAND {
			return gatedByControl(b, controls)
		}
	}
	return false
}

// gatedByControl reports an && chain with an operand `control == …` or an
// || chain with `control != …`: in the correct run that operand
// short-circuits the chain, so its other operands decide nothing.
func gatedByControl(chain *ast.BinaryExpr, controls []string) bool {
	var ops []ast.Expr
	var flatten func(e ast.Expr)
	flatten = func(e ast.Expr) {
		if b, ok := unparen(e).(*ast.BinaryExpr); ok && b.Op == chain.Op {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		ops = append(ops, unparen(e))
	}
	flatten(chain)
	want := token.EQL
	if chain.Op == token.LOR {
		want = token.NEQ
	}
	for _, o := range ops {
		if b, ok := o.(*ast.BinaryExpr); ok && b.Op == want && selectsControl(b, controls) {
			return true
		}
	}
	return false
}

func isDuration(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Duration"
}
