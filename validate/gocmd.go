package validate

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// The Go rule (spec 000 §Conformance, "Locality contract": atomic-looking work is never
// silently scattered). It finds every place Go code groups keys into one unit of work and
// requires the keys to be provably one slot, or the call site to declare why not:
//
//   - one multi-key command: client.NewCmd(name, keys, …), client.Cmd{Keys: keys};
//     go-redis MGet/Del/Exists/Unlink/Touch/SInter/SUnion/SDiff/PFCount (ctx, keys…) and
//     Rename/RenameNX/RPopLPush/LMove/BLMove/SMove/Copy; valkey-go builders with .Key(a, b, …)
//     → RuleMultiKeyCmd
//   - one script call: client.RunScript(ctx, pool, script, keys, …) or
//     client.RunScriptWait (the durability mode's), a client.Cmd or NewCmd
//     whose command is EVAL/EVALSHA/FCALL; go-redis Eval/EvalSha/EvalRO/EvalShaRO/FCall/FCallRO
//     (ctx, src, keys, …) and (*redis.Script).Run/RunRO (ctx, c, keys, …); a valkey-go
//     Eval/Evalsha/Fcall builder → RuleScriptKeys
//   - a pipeline: go-redis Pipelined(ctx, func(p) …) or p := X.Pipeline() and the commands
//     queued on p; valkey-go DoMulti(ctx, cmd, cmd, …) → RulePipelineKeys
//   - a transaction: go-redis TxPipelined / TxPipeline(); a valkey-go DoMulti with a
//     B().Multi() → RuleTxKeys
//
// Keys are followed through a slice literal, a local (or package) variable every binding of
// which is a []string literal or an append to it, and append(…) itself. A slice built at
// run time — appended to in a loop, written element by element, or not visible in the
// function at all (a parameter, a field, a function's result: some caller built it) — is
// unproven (RuleRuntimeKeys) unless the call site (or the line building the slice) declares
// it, or every key it can hold carries one literal hash tag. The runtime twin
// (validate/locality) then checks the actual keys of every call.
//
// Which go-redis methods carry several keys comes from the command table (Table: the
// server's COMMAND key specs): a method whose upper-cased name is a command with keys
// 1..-1 (MGet, SInterStore, SSubscribe, …) or 1..2 (Rename, LMove, …), besides the
// hand-listed methods kept for the hand table.
//
// Keys are provably one slot when every key is a string constant of one slot (Axiom A1),
// when each is a concatenation or fmt.Sprintf sharing one hash-tag prefix (see tagProof),
// or when they are the same expression.
//
// Annotations, on the line of the call or the line directly above (or on/above the slice
// literal that holds the keys), each with a reason:
//
//	//slotgate:same-slot <why>            the keys share a slot for a reason the validator cannot see
//	//slotgate:per-key-scatter <how>      pipelines only: the keys may span slots; <how> says how a
//	                                      partial failure is reported per key (never on one command or
//	                                      a transaction: a single command cannot scatter)
//	//slotgate:disabled-mode-only <why>   a deliberately cross-slot call that is legal only with
//	                                      cluster mode disabled (spec 000 §The protocol: A/B scripts,
//	                                      backfill, reverse merge)
//
// An annotation with no reason, an unknown //slotgate: directive, or per-key-scatter where it
// cannot apply is reported as RuleGoAnnotation and declares nothing.

// groupKind is what a group of keys is sent as.
type groupKind int

const (
	groupCmd groupKind = iota
	groupScript
	groupPipeline
	groupTx
)

func (k groupKind) rule() Rule {
	return [...]Rule{RuleMultiKeyCmd, RuleScriptKeys, RulePipelineKeys, RuleTxKeys}[k]
}

// Annotation directives (the text after "//").
const (
	annotSameSlot      = "slotgate:same-slot"
	annotPerKeyScatter = "slotgate:per-key-scatter"
	annotDisabledMode  = "slotgate:disabled-mode-only"
)

// annotation is one well-formed //slotgate: comment.
type annotation struct {
	directive string
	pos       token.Position
}

// goFile is one parsed file under the Go rule.
type goFile struct {
	name    string
	fset    *token.FileSet
	f       *ast.File
	imports map[string]bool // local names of imported packages
	annots  map[int]annotation
	table   *Table
	out     []Finding
}

// checkGoCmds applies the Go rule to one parsed file.
func (t *Table) checkGoCmds(name string, fset *token.FileSet, f *ast.File) []Finding {
	g := &goFile{name: name, fset: fset, f: f, imports: map[string]bool{}, annots: map[int]annotation{}, table: t}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		local := importName(path)
		if im.Name != nil {
			local = im.Name.Name
		}
		g.imports[local] = true
	}
	g.readAnnotations()
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if x.Body != nil {
				g.check(newScope(g, x), x.Body)
			}
		case *ast.GenDecl: // package-level var initialisers
			if x.Tok == token.VAR {
				g.check(newScope(g, nil), x)
			}
		}
	}
	sort.SliceStable(g.out, func(i, j int) bool { return g.out[i].Line < g.out[j].Line })
	return g.out
}

func (g *goFile) readAnnotations() {
	for _, cg := range g.f.Comments {
		for _, c := range cg.List {
			txt, ok := strings.CutPrefix(c.Text, "//")
			if !ok || !strings.HasPrefix(txt, "slotgate:") {
				continue
			}
			pos := g.fset.Position(c.Pos())
			directive, why, _ := strings.Cut(txt, " ")
			bad := func(format string, a ...any) {
				g.out = append(g.out, Finding{File: g.name, Line: pos.Line, Col: pos.Column, Rule: RuleGoAnnotation, Message: fmt.Sprintf(format, a...)})
			}
			switch directive {
			case annotSameSlot, annotPerKeyScatter, annotDisabledMode:
			default:
				bad("unknown annotation //%s (want //%s, //%s or //%s, each with a reason)", directive, annotSameSlot, annotPerKeyScatter, annotDisabledMode)
				continue
			}
			if strings.TrimSpace(why) == "" {
				bad("//%s without a reason: say why (for a scatter: how a partial failure is reported per key)", directive)
				continue
			}
			g.annots[pos.Line] = annotation{directive: directive, pos: pos}
		}
	}
}

// annotationFor returns the annotation on line or the line above.
func (g *goFile) annotationFor(line int) (annotation, bool) {
	if a, ok := g.annots[line]; ok {
		return a, true
	}
	a, ok := g.annots[line-1]
	return a, ok
}

// group is one unit of work and the candidate key lists it may carry (one per binding of
// a key variable).
type group struct {
	at    ast.Node
	what  string
	kind  groupKind
	lists []keyList
	// built is where a key slice (or a pipeline's commands) built at run time was written:
	// valid when the group is judged by RuleRuntimeKeys.
	built token.Pos
	// opaque: the key slice's content is not visible in the function at all (a parameter,
	// a field, a function's result) — in practice a slice some caller built at run time.
	opaque bool
}

// check finds the groups in one function body (closures included) or package-level
// declaration, and judges them.
func (g *goFile) check(sc *scope, root ast.Node) {
	var groups []group
	ast.Inspect(root, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CompositeLit:
			if isSel(x.Type, "client", "Cmd") {
				if gr, ok := sc.clientCmdLit(x); ok {
					groups = append(groups, gr)
				}
			}
		case *ast.CallExpr:
			groups = append(groups, sc.callGroups(x)...)
		}
		return true
	})
	groups = append(groups, sc.pipeVarGroups()...)
	for _, gr := range groups {
		g.judge(gr)
	}
}

// judge reports a group unless every candidate list is provably one slot or the call site
// declares it.
func (g *goFile) judge(gr group) {
	if gr.built.IsValid() {
		g.judgeRuntime(gr)
		return
	}
	var bad []ast.Expr
	var origin token.Pos
	for _, l := range gr.lists {
		if len(l.keys) >= 2 && !sameSlot(l.keys) {
			bad, origin = l.keys, l.at
			break
		}
	}
	if bad == nil {
		return
	}
	pos := g.fset.Position(gr.at.Pos())
	a, ok := g.annotationFor(pos.Line)
	if !ok && origin.IsValid() {
		a, ok = g.annotationFor(g.fset.Position(origin).Line)
	}
	if ok {
		switch {
		case a.directive == annotPerKeyScatter && gr.kind != groupPipeline:
			g.out = append(g.out, Finding{File: g.name, Line: a.pos.Line, Col: a.pos.Column, Rule: RuleGoAnnotation,
				Message: "//" + annotPerKeyScatter + " on " + gr.what + ": a single command or a transaction cannot scatter; split it per slot, or declare //" + annotSameSlot + " <why>"})
		default:
			return
		}
	}
	srcs := make([]string, len(bad))
	for i, e := range bad {
		srcs[i] = g.src(e)
	}
	hint := "share one hash tag, or declare //" + annotSameSlot + " <why> or //" + annotDisabledMode + " <why> on the line above"
	if gr.kind == groupPipeline {
		hint = "share one hash tag, or declare //" + annotPerKeyScatter + " <how partial failure is reported> on the line above"
	}
	g.out = append(g.out, Finding{File: g.name, Line: pos.Line, Col: pos.Column, Rule: gr.kind.rule(),
		Message: fmt.Sprintf("%s with %d keys not provably one slot (%s): %s", gr.what, len(bad), strings.Join(first(srcs, 4), ", "), hint)})
}

// judgeRuntime reports a group whose keys come from a slice built at run time (in a loop,
// or element by element), unless the call site — or the line where the slice is built —
// declares it, or every key the slice can hold carries one literal hash tag.
func (g *goFile) judgeRuntime(gr group) {
	if len(gr.lists) > 0 && literalTagged(gr.lists) {
		return
	}
	pos := g.fset.Position(gr.at.Pos())
	built := g.fset.Position(gr.built)
	a, ok := g.annotationFor(pos.Line)
	if !ok {
		a, ok = g.annotationFor(built.Line)
	}
	if ok {
		if a.directive != annotPerKeyScatter || gr.kind == groupPipeline {
			return
		}
		g.out = append(g.out, Finding{File: g.name, Line: a.pos.Line, Col: a.pos.Column, Rule: RuleGoAnnotation,
			Message: "//" + annotPerKeyScatter + " on " + gr.what + ": a single command or a transaction cannot scatter; split it per slot, or declare //" + annotSameSlot + " <why>"})
	}
	hint := "declare //" + annotSameSlot + " <why> or //" + annotDisabledMode + " <why> on the line above"
	if gr.kind == groupPipeline {
		hint = "declare //" + annotPerKeyScatter + " <how partial failure is reported> or //" + annotSameSlot + " <why> on the line above"
	}
	from := fmt.Sprintf("built at run time (line %d)", built.Line)
	if gr.opaque {
		from = "from a slice not visible here (a parameter, field or result, built at run time elsewhere)"
	}
	g.out = append(g.out, Finding{File: g.name, Line: pos.Line, Col: pos.Column, Rule: RuleRuntimeKeys,
		Message: fmt.Sprintf("%s with keys %s: no slot is provable from the source; %s", gr.what, from, hint)})
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

// src renders an expression as source, for messages and for comparing pure expressions.
func (g *goFile) src(e ast.Expr) string { return exprString(e) }

// isSel reports whether e is pkg.name.
func isSel(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

// go-redis command methods by key shape. Every other method of a pipeliner is taken to be
// a single-key command whose key follows ctx, except the ones in redisKeyless.
var (
	redisMultiKey = set("MGet", "Del", "Unlink", "Exists", "Touch", "SInter", "SUnion", "SDiff", "PFCount")
	redisTwoKey   = set("Rename", "RenameNX", "RPopLPush", "LMove", "BLMove", "SMove", "Copy")
	redisScript   = set("Eval", "EvalSha", "EvalRO", "EvalShaRO", "FCall", "FCallRO")
	redisKeyless  = set("Do", "Exec", "Discard", "Len", "Process", "Publish", "Ping", "Echo", "Select", "Time", "DBSize",
		"Info", "ClientSetName", "Auth", "Hello", "Multi", "Cmds", "Pipelined", "TxPipelined", "Pipeline", "TxPipeline")
	valkeyScript = set("Eval", "Evalsha", "EvalRo", "EvalshaRo", "Fcall", "FcallRo")
)

// multiKey reports whether a go-redis method sends a command whose keys are all of its
// arguments after ctx (all) or its first two (two): the server's table decides (the
// method's name, upper-cased, is the command: MGet → MGET keys 1..-1, LMove → LMOVE keys
// 1..2), with the hand-listed methods kept for a run on the hand table.
func (sc *scope) multiKey(method string) (all, two bool) {
	all, two = sc.g.table.multiKeyShape(strings.ToUpper(method))
	return all || redisMultiKey[method], two || redisTwoKey[method]
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// callGroups returns the groups one call forms.
func (sc *scope) callGroups(call *ast.CallExpr) []group {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	method := sel.Sel.Name
	// impl/client shapes.
	switch {
	case isSel(call.Fun, "client", "NewCmd") && len(call.Args) >= 2:
		kind, what := groupCmd, "client.NewCmd"
		if lit, ok := stringLit(call.Args[0]); ok && IsScriptCommand(lit) {
			kind, what = groupScript, "client.NewCmd("+strings.ToUpper(lit)+")"
		}
		return sc.keyed(call, what, kind, call.Args[1])
	case isSel(call.Fun, "client", "RunScript") && len(call.Args) >= 4:
		return sc.keyed(call, "client.RunScript", groupScript, call.Args[3])
	case isSel(call.Fun, "client", "RunScriptWait") && len(call.Args) >= 4:
		// The durability mode's script call: the same keys argument (its
		// barrier key is derived from them).
		return sc.keyed(call, "client.RunScriptWait", groupScript, call.Args[3])
	}
	if id, ok := sel.X.(*ast.Ident); ok && sc.g.imports[id.Name] {
		return nil // a package function, not a client method
	}
	// valkey-go: DoMulti(ctx, cmds…) is a pipeline (a transaction with B().Multi()).
	if method == "DoMulti" && len(call.Args) >= 2 {
		var keys []ast.Expr
		kind, what := groupPipeline, "valkey-go DoMulti"
		if call.Ellipsis.IsValid() {
			last := call.Args[len(call.Args)-1]
			if at, ok := sc.runtimeSlice(last); ok {
				return []group{{at: call, what: what, kind: kind, built: at}}
			}
			return []group{{at: call, what: what, kind: kind, built: last.Pos(), opaque: true}}
		}
		for _, a := range call.Args[1:] {
			chain := builderChain(a)
			if chain["Multi"] != nil {
				kind, what = groupTx, "valkey-go DoMulti(MULTI…EXEC)"
			}
			for _, k := range chain["Key"] {
				keys = append(keys, k.Args...)
			}
		}
		return []group{{at: call, what: what, kind: kind, lists: []keyList{{at: call.Pos(), keys: keys}}}}
	}
	// valkey-go: a builder chain ending in .Build() with .Key(a, b, …).
	if method == "Build" {
		chain := builderChain(call)
		if chain["B"] == nil || len(chain["Key"]) == 0 {
			return nil
		}
		var keys []ast.Expr
		for _, k := range chain["Key"] {
			if len(k.Args) == 1 && k.Ellipsis.IsValid() {
				if at, ok := sc.runtimeSlice(k.Args[0]); ok {
					lists, _ := sc.resolve(k.Args[0], 0)
					return []group{{at: call, what: "valkey-go builder", kind: builderKind(chain), lists: lists, built: at}}
				}
				lists, ok := sc.resolve(k.Args[0], 0)
				if !ok {
					return []group{{at: call, what: "valkey-go builder", kind: builderKind(chain), built: k.Args[0].Pos(), opaque: true}}
				}
				return []group{{at: call, what: "valkey-go builder", kind: builderKind(chain), lists: lists}}
			}
			keys = append(keys, k.Args...)
		}
		return []group{{at: call, what: "valkey-go builder", kind: builderKind(chain), lists: []keyList{{at: call.Pos(), keys: keys}}}}
	}
	// go-redis shapes (ctx first).
	allKeys, twoKeys := sc.multiKey(method)
	switch {
	case (method == "Pipelined" || method == "TxPipelined") && len(call.Args) == 2:
		fn, ok := call.Args[1].(*ast.FuncLit)
		if !ok || len(fn.Type.Params.List) != 1 || len(fn.Type.Params.List[0].Names) != 1 {
			return nil
		}
		kind, what := groupPipeline, "go-redis Pipelined"
		if method == "TxPipelined" {
			kind, what = groupTx, "go-redis TxPipelined"
		}
		keys, ok, looped := sc.queuedKeys(fn.Body, fn.Type.Params.List[0].Names[0].Name, fn.Body)
		if looped.IsValid() {
			return []group{{at: call, what: what, kind: kind, lists: []keyList{{at: call.Pos(), keys: keys}}, built: looped}}
		}
		if !ok {
			return nil
		}
		return []group{{at: call, what: what, kind: kind, lists: []keyList{{at: call.Pos(), keys: keys}}}}
	case method == "Watch" && len(call.Args) >= 3: // go-redis Watch(ctx, fn, keys…): an optimistic transaction
		if len(call.Args) == 3 && call.Ellipsis.IsValid() {
			return sc.keyed(call, "go-redis Watch", groupTx, call.Args[2])
		}
		return []group{{at: call, what: "go-redis Watch", kind: groupTx, lists: []keyList{{at: call.Pos(), keys: call.Args[2:]}}}}
	case allKeys && len(call.Args) >= 2:
		if len(call.Args) == 2 && call.Ellipsis.IsValid() {
			return sc.keyed(call, "go-redis "+method, groupCmd, call.Args[1])
		}
		return []group{{at: call, what: "go-redis " + method, kind: groupCmd, lists: []keyList{{at: call.Pos(), keys: call.Args[1:]}}}}
	case twoKeys && len(call.Args) >= 3:
		return []group{{at: call, what: "go-redis " + method, kind: groupCmd, lists: []keyList{{at: call.Pos(), keys: call.Args[1:3]}}}}
	case redisScript[method] && len(call.Args) >= 3:
		return sc.keyed(call, "go-redis "+method, groupScript, call.Args[2])
	case (method == "Run" || method == "RunRO") && len(call.Args) >= 3:
		return sc.keyed(call, "go-redis Script."+method, groupScript, call.Args[2])
	}
	return nil
}

// keyed is a group whose keys are one slice expression; nothing when its content is not
// visible here.
func (sc *scope) keyed(call ast.Node, what string, kind groupKind, keys ast.Expr) []group {
	if at, ok := sc.runtimeSlice(keys); ok {
		lists, _ := sc.resolve(keys, 0)
		return []group{{at: call, what: what, kind: kind, lists: lists, built: at}}
	}
	lists, ok := sc.resolve(keys, 0)
	if !ok {
		return []group{{at: call, what: what, kind: kind, built: keys.Pos(), opaque: true}}
	}
	return []group{{at: call, what: what, kind: kind, lists: lists}}
}

// clientCmdLit is a client.Cmd{Prefix: …, Keys: …} literal.
func (sc *scope) clientCmdLit(x *ast.CompositeLit) (group, bool) {
	var keys ast.Expr
	kind, what := groupCmd, "client.Cmd"
	for _, e := range x.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		id, _ := kv.Key.(*ast.Ident)
		if id == nil {
			continue
		}
		switch id.Name {
		case "Keys":
			keys = kv.Value
		case "Prefix":
			if lit, ok := kv.Value.(*ast.CompositeLit); ok && len(lit.Elts) > 0 {
				if name, ok := stringLit(lit.Elts[0]); ok && IsScriptCommand(name) {
					kind, what = groupScript, "client.Cmd("+strings.ToUpper(name)+")"
				}
			}
		}
	}
	if keys == nil {
		return group{}, false
	}
	if at, ok := sc.runtimeSlice(keys); ok {
		lists, _ := sc.resolve(keys, 0)
		return group{at: x, what: what, kind: kind, lists: lists, built: at}, true
	}
	lists, ok := sc.resolve(keys, 0)
	if !ok {
		return group{at: x, what: what, kind: kind, built: keys.Pos(), opaque: true}, true
	}
	return group{at: x, what: what, kind: kind, lists: lists}, true
}

// builderChain walks a valkey-go builder chain (c.B().Mget().Key(a).Build()) and returns
// its calls by method name.
func builderChain(e ast.Expr) map[string][]*ast.CallExpr {
	out := map[string][]*ast.CallExpr{}
	for {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return out
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return out
		}
		out[sel.Sel.Name] = append(out[sel.Sel.Name], call)
		e = sel.X
	}
}

func builderKind(chain map[string][]*ast.CallExpr) groupKind {
	for m := range chain {
		if valkeyScript[m] {
			return groupScript
		}
	}
	return groupCmd
}

// queuedKeys collects the keys of every go-redis command queued on the pipeliner named
// pipe within body. false when a queued command's keys are not visible. looped is the
// position of the first command queued inside a loop within loopsIn: the pipeline's
// commands are then built at run time.
func (sc *scope) queuedKeys(body ast.Node, pipe string, loopsIn ast.Node) (keys []ast.Expr, ok bool, looped token.Pos) {
	ok = true
	ast.Inspect(body, func(n ast.Node) bool {
		call, isCall := n.(*ast.CallExpr)
		if !isCall {
			return true
		}
		sel, isSel := call.Fun.(*ast.SelectorExpr)
		if !isSel {
			return true
		}
		if id, isID := sel.X.(*ast.Ident); !isID || id.Name != pipe {
			return true
		}
		m := sel.Sel.Name
		if !redisKeyless[m] && !looped.IsValid() && sc.inLoop(call.Pos(), loopsIn) {
			looped = call.Pos()
		}
		allKeys, twoKeys := sc.multiKey(m)
		switch {
		case redisKeyless[m]:
		case allKeys:
			if call.Ellipsis.IsValid() {
				lists, resolved := sc.resolve(call.Args[len(call.Args)-1], 0)
				if !resolved || len(lists) != 1 {
					ok = false
					return false
				}
				keys = append(keys, lists[0].keys...)
			} else if len(call.Args) > 1 {
				keys = append(keys, call.Args[1:]...)
			}
		case twoKeys && len(call.Args) >= 3:
			keys = append(keys, call.Args[1:3]...)
		case redisScript[m] && len(call.Args) >= 3:
			lists, resolved := sc.resolve(call.Args[2], 0)
			if !resolved || len(lists) != 1 {
				ok = false
				return false
			}
			keys = append(keys, lists[0].keys...)
		case len(call.Args) >= 2:
			keys = append(keys, call.Args[1])
		}
		return true
	})
	return keys, ok, looped
}

// importName guesses a package's name from its import path, as goimports does: the last
// element, skipping a major-version suffix and trimming "go-" / "-go"
// (github.com/redis/go-redis/v9 → redis, github.com/valkey-io/valkey-go → valkey).
func importName(path string) string {
	elems := strings.Split(path, "/")
	name := elems[len(elems)-1]
	if len(elems) > 1 && len(name) >= 2 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = elems[len(elems)-2]
	}
	name = strings.TrimPrefix(name, "go-")
	name = strings.TrimSuffix(name, "-go")
	return name
}
