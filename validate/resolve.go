package validate

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/slot"
)

// scope is what the Go rule knows about one function's variables: every binding of each
// name, so a key slice held in a variable can be followed to the literals that fill it.
// Scoping is ignored on purpose (as in the Lua rule): one binding whose value is not
// visible — a parameter, a function result, an element assignment — makes every use of
// the name unknown, and an unknown slice is not judged statically. Conservative about
// what it claims to see, never permissive about what it sees.
type scope struct {
	g        *goFile
	fd       *ast.FuncDecl
	bindings map[string][]ast.Expr // nil entry: a binding whose value is not visible
	// loops are the bodies of the function's for and range statements (closures included).
	loops []*ast.BlockStmt
	// runtime holds the slices built at run time: appended to inside a loop, or written
	// element by element (keys[i] = …), at the position of that write. Their content is
	// not visible, so they are unproven (RuleRuntimeKeys) unless the call site declares
	// them or every key they can hold carries one literal hash tag.
	runtime map[string]token.Pos
}

// emptySlice stands for `var keys []string`: a binding to no keys yet.
var emptySlice = &ast.CompositeLit{Type: &ast.ArrayType{Elt: ast.NewIdent("string")}}

// newScope reads fd's bindings; a nil fd is the package level (package vars only).
func newScope(g *goFile, fd *ast.FuncDecl) *scope {
	sc := &scope{g: g, fd: fd, bindings: map[string][]ast.Expr{}, runtime: map[string]token.Pos{}}
	if fd == nil {
		return sc
	}
	opaque := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				sc.bindings[n.Name] = append(sc.bindings[n.Name], nil)
			}
		}
	}
	opaque(fd.Recv)
	opaque(fd.Type.Params)
	opaque(fd.Type.Results)
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			opaque(x.Type.Params)
			opaque(x.Type.Results)
		case *ast.ForStmt:
			sc.loops = append(sc.loops, x.Body)
		case *ast.RangeStmt:
			sc.loops = append(sc.loops, x.Body)
			for _, e := range []ast.Expr{x.Key, x.Value} {
				if id, ok := e.(*ast.Ident); ok {
					sc.bindings[id.Name] = append(sc.bindings[id.Name], nil)
				}
			}
		case *ast.AssignStmt:
			for i, l := range x.Lhs {
				switch lhs := l.(type) {
				case *ast.Ident:
					var rhs ast.Expr
					if len(x.Rhs) == len(x.Lhs) && (x.Tok == token.DEFINE || x.Tok == token.ASSIGN) {
						rhs = x.Rhs[i]
					}
					sc.bindings[lhs.Name] = append(sc.bindings[lhs.Name], rhs)
				case *ast.IndexExpr: // keys[i] = …: the slice's content is no longer its literal
					if id, ok := lhs.X.(*ast.Ident); ok {
						sc.bindings[id.Name] = append(sc.bindings[id.Name], nil)
					}
				}
			}
		case *ast.ValueSpec:
			sc.valueSpec(x, sc.bindings)
		}
		return true
	})
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, l := range as.Lhs {
			switch lhs := l.(type) {
			case *ast.Ident:
				if len(as.Rhs) != len(as.Lhs) {
					continue
				}
				if call, ok := as.Rhs[i].(*ast.CallExpr); ok && isAppendTo(call, lhs.Name) && sc.inLoop(as.Pos(), fd.Body) {
					sc.markRuntime(lhs.Name, as.Pos())
				}
			case *ast.IndexExpr:
				if id, ok := lhs.X.(*ast.Ident); ok {
					sc.markRuntime(id.Name, as.Pos())
				}
			}
		}
		return true
	})
	return sc
}

func (sc *scope) markRuntime(name string, at token.Pos) {
	if _, ok := sc.runtime[name]; !ok {
		sc.runtime[name] = at
	}
}

// inLoop reports whether pos lies in the body of a loop that is itself inside within.
func (sc *scope) inLoop(pos token.Pos, within ast.Node) bool {
	for _, b := range sc.loops {
		if b.Pos() <= pos && pos < b.End() && within.Pos() <= b.Pos() && b.End() <= within.End() {
			return true
		}
	}
	return false
}

// runtimeSlice reports whether the key slice e is (or appends, or slices) a slice built
// at run time, and where it was built.
func (sc *scope) runtimeSlice(e ast.Expr) (token.Pos, bool) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return sc.runtimeSlice(x.X)
	case *ast.SliceExpr:
		return sc.runtimeSlice(x.X)
	case *ast.Ident:
		at, ok := sc.runtime[x.Name]
		return at, ok
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "append" && len(x.Args) > 0 {
			if at, ok := sc.runtimeSlice(x.Args[0]); ok {
				return at, true
			}
			if x.Ellipsis.IsValid() {
				return sc.runtimeSlice(x.Args[len(x.Args)-1])
			}
		}
	}
	return token.NoPos, false
}

// literalTagged reports whether every key of every list carries one literal hash tag (a
// constant slot), so a slice built in a loop from such keys is still one slot.
func literalTagged(lists []keyList) bool {
	want := ""
	for _, l := range lists {
		for _, k := range l.keys {
			p, ok := slotProof(k)
			if !ok || !strings.HasPrefix(p, "slot:") || (want != "" && p != want) {
				return false
			}
			want = p
		}
	}
	return want != ""
}

// valueSpec records `var a, b = x, y` and `var keys []string`.
func (sc *scope) valueSpec(x *ast.ValueSpec, into map[string][]ast.Expr) {
	for i, n := range x.Names {
		switch {
		case len(x.Values) == len(x.Names):
			into[n.Name] = append(into[n.Name], x.Values[i])
		case len(x.Values) == 0 && isStringSlice(x.Type):
			into[n.Name] = append(into[n.Name], emptySlice)
		default:
			into[n.Name] = append(into[n.Name], nil)
		}
	}
}

// packageBindings are the file's package-level vars, for a key slice declared there.
func (sc *scope) packageBindings(name string) []ast.Expr {
	out := map[string][]ast.Expr{}
	for _, d := range sc.g.f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			if vs, ok := s.(*ast.ValueSpec); ok {
				sc.valueSpec(vs, out)
			}
		}
	}
	return out[name]
}

// keyList is one list of key expressions a slice may hold, with where the list was written
// (its literal), so a declaration may sit there as well as at the call.
type keyList struct {
	at   token.Pos
	keys []ast.Expr
}

// resolve returns every list of key expressions e may hold, or false when its content is
// not visible here.
func (sc *scope) resolve(e ast.Expr, depth int) ([]keyList, bool) {
	if depth > 8 {
		return nil, false
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return sc.resolve(x.X, depth+1)
	case *ast.CompositeLit:
		if !isStringSlice(x.Type) {
			return nil, false
		}
		return []keyList{{at: x.Pos(), keys: append([]ast.Expr(nil), x.Elts...)}}, true
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); !ok || id.Name != "append" || len(x.Args) == 0 {
			return nil, false
		}
		lists, ok := sc.resolve(x.Args[0], depth+1)
		if !ok {
			return nil, false
		}
		extra, ok := sc.appended(x, depth)
		if !ok {
			return nil, false
		}
		for i := range lists {
			lists[i].keys = append(lists[i].keys, extra...)
		}
		return lists, true
	case *ast.Ident:
		binds, ok := sc.bindings[x.Name]
		if !ok {
			binds = sc.packageBindings(x.Name)
		}
		if len(binds) == 0 {
			return nil, false
		}
		var lists []keyList
		var extra []ast.Expr
		for _, b := range binds {
			if b == nil {
				return nil, false
			}
			if call, ok := b.(*ast.CallExpr); ok && isAppendTo(call, x.Name) {
				more, ok := sc.appended(call, depth)
				if !ok {
					return nil, false
				}
				extra = append(extra, more...)
				continue
			}
			got, ok := sc.resolve(b, depth+1)
			if !ok {
				return nil, false
			}
			lists = append(lists, got...)
		}
		if len(lists) == 0 {
			return nil, false
		}
		for i := range lists {
			lists[i].keys = append(lists[i].keys, extra...)
		}
		return lists, true
	}
	return nil, false
}

// appended is what append(base, …) adds: its further arguments, or a spread slice's keys.
func (sc *scope) appended(call *ast.CallExpr, depth int) ([]ast.Expr, bool) {
	rest := call.Args[1:]
	if !call.Ellipsis.IsValid() {
		return rest, true
	}
	lists, ok := sc.resolve(rest[len(rest)-1], depth+1)
	if !ok {
		return nil, false
	}
	var out []ast.Expr
	for _, l := range lists {
		out = append(out, l.keys...)
	}
	return out, true
}

func isAppendTo(call *ast.CallExpr, name string) bool {
	fn, ok := call.Fun.(*ast.Ident)
	if !ok || fn.Name != "append" || len(call.Args) == 0 {
		return false
	}
	id, ok := call.Args[0].(*ast.Ident)
	return ok && id.Name == name
}

func isStringSlice(t ast.Expr) bool {
	at, ok := t.(*ast.ArrayType)
	if !ok || at.Len != nil {
		return false
	}
	id, ok := at.Elt.(*ast.Ident)
	return ok && id.Name == "string"
}

// pipeVarGroups finds `p := X.Pipeline()` / `X.TxPipeline()` and the commands queued on p
// in the same function.
func (sc *scope) pipeVarGroups() []group {
	var out []group
	if sc.fd == nil {
		return nil
	}
	ast.Inspect(sc.fd.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		id, ok := as.Lhs[0].(*ast.Ident)
		call, ok2 := as.Rhs[0].(*ast.CallExpr)
		if !ok || !ok2 || len(call.Args) != 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Pipeline" && sel.Sel.Name != "TxPipeline") {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && sc.g.imports[x.Name] {
			return true
		}
		keys, ok, looped := sc.queuedKeys(sc.fd.Body, id.Name, afterNode{as.End(), sc.fd.Body.End()})
		kind, what := groupPipeline, "go-redis Pipeline"
		if sel.Sel.Name == "TxPipeline" {
			kind, what = groupTx, "go-redis TxPipeline"
		}
		if looped.IsValid() {
			out = append(out, group{at: as, what: what, kind: kind, lists: []keyList{{at: as.Pos(), keys: keys}}, built: looped})
			return true
		}
		if !ok {
			return true
		}
		out = append(out, group{at: as, what: what, kind: kind, lists: []keyList{{at: as.Pos(), keys: keys}}})
		return true
	})
	return out
}

// afterNode is the span from a pipeline's creation to the end of its function: loops there
// queue its commands at run time.
type afterNode struct{ from, to token.Pos }

func (a afterNode) Pos() token.Pos { return a.from }
func (a afterNode) End() token.Pos { return a.to }

// sameSlot reports whether the key expressions provably hash to one slot (Axiom A1).
func sameSlot(keys []ast.Expr) bool {
	var want string
	for i, k := range keys {
		p, ok := slotProof(k)
		if !ok {
			return false
		}
		if i == 0 {
			want = p
		} else if p != want {
			return false
		}
	}
	return true
}

// part is one piece of a key template: literal text, or an expression's value.
type part struct {
	lit  string
	expr ast.Expr
}

// slotProof returns a string that is equal for two keys only if they provably hash to one
// slot:
//   - a constant key: "slot:N", N its slot (hash tag honoured);
//   - a key built by + or fmt.Sprintf whose template starts with literal text containing
//     "{" followed by a literal character other than "}", and has a literal "}" after it:
//     the key's hash tag is then a function of the template up to that "}" alone (the
//     first "{" is in the literal; the tag ends at the first "}" after it, inside that
//     prefix at the latest, and is never empty), so the proof is that prefix rendered with
//     its expressions — or "slot:N" when the tag is literal;
//   - any other side-effect-free expression: the expression itself (the same key twice).
func slotProof(e ast.Expr) (string, bool) {
	parts, ok := template(e)
	if !ok {
		if pure(e) {
			return "expr:" + types.ExprString(e), true
		}
		return "", false
	}
	var b strings.Builder
	allLit := true
	for _, p := range parts {
		if p.expr != nil {
			allLit = false
		}
	}
	if allLit {
		for _, p := range parts {
			b.WriteString(p.lit)
		}
		return "slot:" + strconv.Itoa(slot.Of(b.String())), true
	}
	// Leading literal text up to the first "{".
	open := -1
	var lead strings.Builder
	i := 0
	for ; i < len(parts) && parts[i].expr == nil; i++ {
		if j := strings.IndexByte(parts[i].lit, '{'); j >= 0 {
			open = j
			lead.WriteString(parts[i].lit[:j+1])
			break
		}
		lead.WriteString(parts[i].lit)
	}
	if open < 0 {
		if len(parts) == 1 && pure(parts[0].expr) {
			return "expr:" + types.ExprString(parts[0].expr), true
		}
		return "", false
	}
	after := parts[i].lit[open+1:]
	if after == "" || after[0] == '}' {
		return "", false // the tag could be empty: then the whole key is hashed
	}
	// Through the first literal "}" after the "{".
	tagLiteral := true
	var tag strings.Builder
	rest := append([]part{{lit: after}}, parts[i+1:]...)
	for _, p := range rest {
		if p.expr != nil {
			tagLiteral = false
			tag.WriteString("${" + types.ExprString(p.expr) + "}")
			continue
		}
		if j := strings.IndexByte(p.lit, '}'); j >= 0 {
			tag.WriteString(p.lit[:j])
			if tagLiteral {
				return "slot:" + strconv.Itoa(slot.Of("{"+tag.String()+"}")), true
			}
			return "tmpl:" + lead.String() + tag.String() + "}", true
		}
		tag.WriteString(p.lit)
	}
	return "", false
}

// template splits a key built from string literals, + and fmt.Sprintf into parts; false for
// any other shape.
func template(e ast.Expr) ([]part, bool) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return template(x.X)
	case *ast.BasicLit:
		s, ok := stringLit(x)
		return []part{{lit: s}}, ok
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return nil, false
		}
		l, ok1 := templateOrPure(x.X)
		r, ok2 := templateOrPure(x.Y)
		return append(l, r...), ok1 && ok2
	case *ast.CallExpr:
		if !isSel(x.Fun, "fmt", "Sprintf") || len(x.Args) == 0 {
			return nil, false
		}
		format, ok := stringLit(x.Args[0])
		if !ok {
			return nil, false
		}
		args := x.Args[1:]
		var parts []part
		var lit strings.Builder
		for i := 0; i < len(format); i++ {
			if format[i] != '%' {
				lit.WriteByte(format[i])
				continue
			}
			if i+1 >= len(format) {
				return nil, false
			}
			i++
			switch format[i] {
			case '%':
				lit.WriteByte('%')
			case 's', 'd', 'v':
				if len(args) == 0 || !pure(args[0]) {
					return nil, false
				}
				parts = append(parts, part{lit: lit.String()}, part{expr: args[0]})
				lit.Reset()
				args = args[1:]
			default:
				return nil, false // widths, flags, other verbs: not modelled
			}
		}
		if len(args) != 0 {
			return nil, false
		}
		return append(parts, part{lit: lit.String()}), true
	}
	return nil, false
}

func templateOrPure(e ast.Expr) ([]part, bool) {
	if t, ok := template(e); ok {
		return t, true
	}
	if pure(e) {
		return []part{{expr: e}}, true
	}
	return nil, false
}

// pure reports an expression that evaluates to the same value twice in a row: a name, a
// field path, an index by a constant.
func pure(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name != "_"
	case *ast.SelectorExpr:
		return pure(x.X)
	case *ast.IndexExpr:
		_, lit := x.Index.(*ast.BasicLit)
		return lit && pure(x.X)
	case *ast.ParenExpr:
		return pure(x.X)
	}
	return false
}

// stringLit returns a string literal's value.
func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// exprString renders an expression as Go source.
func exprString(e ast.Expr) string { return types.ExprString(e) }
