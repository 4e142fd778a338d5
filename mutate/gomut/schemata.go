package gomut

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Why mutant schemata: a Go mutant built on its own costs one
// `go test -c` of every suite that covers it — the mutated package, every
// package between it and the suite, and the link: 16–43 s a mutant on 2
// cores (docs/MUTATION.md), more than its focused spec runs. A schemata
// build compiles every mutant of a package into one binary instead: each
// mutation site becomes a switch on the active mutant's id (package
// mutate/schema, read once from SLOTGATE_MUTANT), so one build per suite
// serves the whole run and a mutant costs only its runs.
//
// Each site is rewritten in place, its original code kept verbatim inside
// the switch, so nested sites compose (an if condition negated around a
// comparison swapped in it) and, with no mutant active, the program is the
// original one. What each operator becomes:
//
//	negate-cond      cond                → schema.Not(id, cond)
//	swap-cmp         a < b               → schema.Lt(id, a, b)   (Le, Gt, Ge, Eq, Ne)
//	drop-err-return  if err != nil {…}   → if (err != nil) && !schema.On(id) {…}
//	ttl-off-by-one   3 (a Duration)      → schema.Pick[time.Duration](id, 2, 3)
//	drop-bound       min                 → schema.Pick(id, "-inf", min)
//	chan-drop        stmt                → if schema.On(id) { <mutated stmt> } else { stmt }
//
// Every expression is evaluated once and in the original order, active or
// not (drop-bound's original argument too: a string the mutant would not
// have built, no effect). A mutant that cannot be expressed — a removed
// LIMIT clause changes an argument count; a schema that does not
// type-check, e.g. a comparison whose operands' types a generic call cannot
// infer — is left out of the schemata (Schemata.Fallback says why) and
// built on its own as before.

// SchemaPkg names the package schemata call (mutate/schema) and where its
// source is, to type-check a schema against it.
type SchemaPkg struct {
	Path string // import path
	Dir  string // source directory
}

// DefaultSchemaPkg is the module's own mutate/schema.
func DefaultSchemaPkg(root string) (SchemaPkg, error) {
	mod, err := modulePath(root)
	if err != nil {
		return SchemaPkg{}, err
	}
	return SchemaPkg{Path: mod + "/mutate/schema", Dir: filepath.Join(root, "mutate", "schema")}, nil
}

// schemaAlias is the name a schema file imports SchemaPkg under.
const schemaAlias = "slotgatemutant"

// Schemata is every expressible mutant of the targets compiled into their
// files.
type Schemata struct {
	// Files maps a module-relative path to its schema source; files
	// without a site are not in it (they stay as they are).
	Files map[string][]byte
	// In holds the ids compiled into Files: SLOTGATE_MUTANT=<id> runs it.
	In map[string]bool
	// Fallback maps the id of a mutant left out to why: it is built on
	// its own.
	Fallback map[string]string
	// pos maps an original file's positions into its schema file (Locate).
	pos map[string]*posMap
}

// Locate returns m with Span and FuncSpan moved to where its code sits in
// the schema file: coverage of a schemata build reports schema positions.
func (s *Schemata) Locate(m Mutant) Mutant {
	p := s.pos[m.File]
	if p == nil {
		return m
	}
	m.Span, m.FuncSpan = p.span(m.Span), p.span(m.FuncSpan)
	return m
}

// posMap maps byte offsets of an original file to its schema file.
type posMap struct {
	origLines, newLines []int // line start offsets
	off                 []int // original offset → schema offset
}

func (p *posMap) span(s Span) Span {
	from := p.toNew(p.offset(s.StartLine, s.StartCol), false)
	to := p.toNew(p.offset(s.EndLine, s.EndCol), true)
	var out Span
	out.StartLine, out.StartCol = p.lineCol(from)
	out.EndLine, out.EndCol = p.lineCol(to)
	return out
}

func (p *posMap) offset(line, col int) int {
	if line < 1 || line > len(p.origLines) {
		return len(p.off) - 1
	}
	return min(p.origLines[line-1]+col-1, len(p.off)-1)
}

// toNew maps an offset; an end offset maps to just after the byte before
// it, so a span does not swallow the text a schema closes it with.
func (p *posMap) toNew(o int, end bool) int {
	if end && o > 0 {
		return p.off[o-1] + 1
	}
	return p.off[o]
}

func (p *posMap) lineCol(o int) (int, int) {
	i := sort.Search(len(p.newLines), func(i int) bool { return p.newLines[i] > o }) - 1
	return i + 1, o - p.newLines[i] + 1
}

func lineStarts(b []byte) []int {
	ls := []int{0}
	for i, c := range b {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// sedit is one edit of a schema: src[at:end] replaced by text (an
// insertion when at == end). Insertions at one offset are ordered so that
// regions nest: a region's closing text before a later region's opening.
type sedit struct {
	at, end int
	text    string
	open    bool // an insertion opening its region (false: closing it)
	rs, re  int  // the region
	seq     int  // the mutant's order in its file
}

func sortEdits(es []sedit) {
	rank := func(e sedit) int {
		switch {
		case e.at == e.end && !e.open:
			return 0 // closes first
		case e.at != e.end:
			return 1
		}
		return 2
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.at != b.at {
			return a.at < b.at
		}
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.at == a.end && !a.open { // closes: innermost first
			if a.rs != b.rs {
				return a.rs > b.rs
			}
			return a.seq > b.seq
		}
		// opens: outermost first
		if a.re != b.re {
			return a.re > b.re
		}
		return a.seq < b.seq
	})
}

// render applies es to src and maps every original offset to the output.
func render(src []byte, es []sedit) ([]byte, []int) {
	es = slices.Clone(es)
	sortEdits(es)
	var b bytes.Buffer
	off := make([]int, len(src)+1)
	at := 0
	copyTo := func(to int) {
		for o := at; o < to; o++ {
			off[o] = b.Len() + o - at
		}
		b.Write(src[at:to])
		at = to
	}
	for _, e := range es {
		copyTo(e.at)
		if e.end > e.at {
			for o := e.at; o < e.end; o++ {
				off[o] = b.Len()
			}
			at = e.end
		}
		b.WriteString(e.text)
	}
	copyTo(len(src))
	off[len(src)] = b.Len()
	return b.Bytes(), off
}

// schemaEdits are site s's schema edits for mutant id, or why it has none.
func schemaEdits(s site, id string, seq int, src []byte, tf *token.File, info *types.Info, qual types.Qualifier) ([]sedit, string) {
	if s.node == nil {
		return nil, "no schema for " + s.op + " of this shape (it changes an argument count)"
	}
	off := func(p token.Pos) int { return tf.Offset(p) }
	q := strconv.Quote(id)
	wrap := func(n ast.Node, open, close string) []sedit {
		rs, re := off(n.Pos()), off(n.End())
		return []sedit{{at: rs, end: rs, text: open, open: true, rs: rs, re: re, seq: seq},
			{at: re, end: re, text: close, rs: rs, re: re, seq: seq}}
	}
	// mutated is the region's text with the mutant's edits applied.
	mutated := func(n ast.Node) (string, bool) {
		rs, re := off(n.Pos()), off(n.End())
		var b strings.Builder
		at := rs
		es := slices.Clone(s.edits)
		sort.Slice(es, func(i, j int) bool { return es[i].start < es[j].start })
		for _, e := range es {
			if e.start < at || e.end > re {
				return "", false
			}
			b.Write(src[at:e.start])
			b.WriteString(e.text)
			at = e.end
		}
		b.Write(src[at:re])
		return b.String(), true
	}
	A := schemaAlias + "."
	switch s.op {
	case OpNegateCond:
		return wrap(s.node, A+"Not("+q+", ", ")"), ""
	case OpSwapCmp:
		x, ok := s.node.(*ast.BinaryExpr)
		if !ok || len(s.edits) != 1 {
			return nil, "swap-cmp site is not one comparison"
		}
		fn := map[token.Token]string{token.LSS: "Lt", token.LEQ: "Le", token.GTR: "Gt", token.GEQ: "Ge", token.EQL: "Eq", token.NEQ: "Ne"}[x.Op]
		if fn == "" {
			return nil, "swap-cmp of " + x.Op.String()
		}
		es := wrap(x, A+fn+"("+q+", ", ")")
		op := off(x.OpPos)
		es = append(es, sedit{at: op, end: op + len(x.Op.String()), text: ", ", seq: seq})
		return es, ""
	case OpDropErrReturn:
		ifs, ok := s.node.(*ast.IfStmt)
		if !ok {
			return nil, "drop-err-return site is not an if"
		}
		return wrap(ifs.Cond, "(", ") && !"+A+"On("+q+")"), ""
	case OpTTLOffByOne:
		lit, ok := s.node.(*ast.BasicLit)
		if !ok || len(s.edits) != 1 {
			return nil, "ttl-off-by-one site is not one literal"
		}
		t := info.Types[lit].Type
		if b, ok := t.(*types.Basic); t == nil || ok && b.Info()&types.IsUntyped != 0 {
			return nil, "the literal has no typed use (a constant expression)"
		}
		ts := types.TypeString(t, qual)
		if strings.Contains(ts, "\x00") {
			return nil, "the literal's type " + t.String() + " is not named by the file's imports"
		}
		return wrap(lit, A+"Pick["+ts+"]("+q+", "+s.edits[0].text+", ", ")"), ""
	case OpDropBound:
		if len(s.edits) != 1 {
			return nil, "drop-bound site is not one argument"
		}
		return wrap(s.node, A+"Pick("+q+", "+s.edits[0].text+", ", ")"), ""
	case OpChanDrop:
		m, ok := mutated(s.node)
		if !ok {
			return nil, "chan-drop edits reach outside the statement"
		}
		return wrap(s.node, "if "+A+"On("+q+") {\n"+m+"\n} else {\n", "\n}"), ""
	}
	return nil, "no schema for operator " + s.op
}

// fileQualifier names a package as file f imports it ("" for the package
// itself); a package f does not import gets a name containing NUL, which
// schemaEdits refuses.
func fileQualifier(f *ast.File, self string) types.Qualifier {
	names := map[string]string{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		switch {
		case im.Name == nil:
			names[p] = "" // the package's own name
		case im.Name.Name != "_" && im.Name.Name != ".":
			names[p] = im.Name.Name
		}
	}
	return func(p *types.Package) string {
		if p.Path() == self {
			return ""
		}
		if n, ok := names[p.Path()]; ok {
			if n == "" {
				return p.Name()
			}
			return n
		}
		return "\x00" + p.Path()
	}
}

// schemaCand is one compiled mutant of a package, with what its schema
// needs.
type schemaCand struct {
	id   string
	file int
	site site
}

// buildSchemata adds package c's schemata to s: the candidates in order,
// each kept only if the package still type-checks with it (a candidate
// that does not is a fallback, and the next one is tried without it).
func buildSchemata(c *pkgChecker, pkgDir string, cands []schemaCand, info *types.Info, sp SchemaPkg, s *Schemata) {
	accepted := map[int][]sedit{}
	cur := map[int][]byte{}
	seq := 0
	for _, cd := range cands {
		seq++
		f := c.files[cd.file]
		tf := c.fset.File(f.ast.Pos())
		es, why := schemaEdits(cd.site, cd.id, seq, f.src, tf, info, fileQualifier(f.ast, c.importPath))
		if why != "" {
			s.Fallback[cd.id] = why
			continue
		}
		try := append(slices.Clone(accepted[cd.file]), es...)
		out := withImport(f, tf, sp, try)
		files := map[int][]byte{}
		for k, v := range cur {
			files[k] = v
		}
		files[cd.file] = out
		if _, err := c.checkFiles(files); err != nil {
			s.Fallback[cd.id] = "its schema does not type-check: " + err.Error()
			continue
		}
		accepted[cd.file], cur[cd.file] = try, out
		s.In[cd.id] = true
	}
	for i, f := range c.files {
		rel := path.Join(pkgDir, f.name)
		tf := c.fset.File(f.ast.Pos())
		es := accepted[i]
		if len(es) == 0 {
			continue
		}
		es = append(es, importEdit(f, tf, sp))
		out, off := render(f.src, es)
		s.Files[rel] = out
		s.pos[rel] = &posMap{origLines: lineStarts(f.src), newLines: lineStarts(out), off: off}
	}
}

// importEdit imports SchemaPkg on the package clause's line, so no line of
// the file moves.
func importEdit(f srcFile, tf *token.File, sp SchemaPkg) sedit {
	at := tf.Offset(f.ast.Name.End())
	return sedit{at: at, end: at, text: "; import " + schemaAlias + " " + strconv.Quote(sp.Path), open: true, rs: at, re: at, seq: -1}
}

func withImport(f srcFile, tf *token.File, sp SchemaPkg, es []sedit) []byte {
	out, _ := render(f.src, append(slices.Clone(es), importEdit(f, tf, sp)))
	return out
}

// checkFiles type-checks the package with the files in repl (by index)
// replaced.
func (c *pkgChecker) checkFiles(repl map[int][]byte) (*types.Info, error) {
	files := make([]*ast.File, len(c.files))
	for j, f := range c.files {
		files[j] = f.ast
		if src, ok := repl[j]; ok {
			nf, err := parser.ParseFile(c.fset, f.name, src, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			files[j] = nf
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	var first error
	conf := types.Config{Importer: c.imp, Error: func(err error) {
		if first == nil {
			first = err
		}
	}}
	_, _ = conf.Check(c.importPath, c.fset, files, info)
	return info, first
}

// schemaImporter type-checks SchemaPkg from source (once) for a schema's
// check; every other import goes to base.
type schemaImporter struct {
	base types.Importer
	fset *token.FileSet
	sp   SchemaPkg
	pkg  *types.Package
	err  error
}

func (si *schemaImporter) Import(p string) (*types.Package, error) {
	if si.sp.Path == "" || p != si.sp.Path {
		return si.base.Import(p)
	}
	if si.pkg == nil && si.err == nil {
		si.pkg, si.err = si.load()
	}
	return si.pkg, si.err
}

func (si *schemaImporter) load() (*types.Package, error) {
	ms, err := filepath.Glob(filepath.Join(si.sp.Dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, m := range ms {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(si.fset, m, nil, 0)
		if err != nil {
			return nil, fmt.Errorf("schema package: %w", err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("schema package: no Go files in %s", si.sp.Dir)
	}
	conf := types.Config{Importer: si.base}
	pkg, err := conf.Check(si.sp.Path, si.fset, files, nil)
	if err != nil {
		return nil, fmt.Errorf("schema package: %w", err)
	}
	return pkg, nil
}
