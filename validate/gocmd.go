package validate

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/slotgate/slotgate/impl/slot"
)

// RuleMultiKeyCmd flags a client.Cmd literal or client.NewCmd call built with two or more
// literal key expressions that are not provably one slot (spec 000 §Conformance, "Locality
// contract": a multi-key op shares a slot or is an explicit per-key scatter, declared at the
// call site).
const RuleMultiKeyCmd Rule = "go/multi-key-cmd"

// Annotations accepted on the line above (or the line of) a multi-key command.
const (
	annotSameSlot      = "//slotgate:same-slot"
	annotPerKeyScatter = "//slotgate:per-key-scatter"
)

// checkGoCmds finds multi-key client commands whose Keys is a []string literal of ≥2
// elements. Keys held in a variable cannot be counted statically and are not judged.
func checkGoCmds(name string, fset *token.FileSet, f *ast.File) []Finding {
	annotated := map[int]bool{} // lines carrying a valid annotation
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			txt := c.Text
			ok := strings.HasPrefix(txt, annotSameSlot) ||
				(strings.HasPrefix(txt, annotPerKeyScatter) && strings.TrimSpace(strings.TrimPrefix(txt, annotPerKeyScatter)) != "")
			if ok {
				annotated[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	var out []Finding
	judge := func(at ast.Node, what string, keys ast.Expr) {
		lit, ok := keys.(*ast.CompositeLit)
		if !ok || len(lit.Elts) < 2 {
			return
		}
		line := fset.Position(at.Pos()).Line
		if annotated[line] || annotated[line-1] {
			return
		}
		var strs []string
		for _, e := range lit.Elts {
			bl, ok := e.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING {
				strs = nil
				break
			}
			s, err := strconv.Unquote(bl.Value)
			if err != nil {
				strs = nil
				break
			}
			strs = append(strs, s)
		}
		if strs != nil && slot.Same(strs...) {
			return
		}
		pos := fset.Position(at.Pos())
		out = append(out, Finding{File: name, Line: pos.Line, Col: pos.Column, Rule: RuleMultiKeyCmd,
			Message: what + " with " + strconv.Itoa(len(lit.Elts)) + " keys not provably one slot: share a hash tag, or annotate the line above with " +
				annotSameSlot + " or " + annotPerKeyScatter + " <why>"})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if isSel(x.Fun, "client", "NewCmd") && len(x.Args) >= 2 {
				judge(x, "client.NewCmd", x.Args[1])
			}
		case *ast.CompositeLit:
			if isSel(x.Type, "client", "Cmd") {
				for _, e := range x.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && id.Name == "Keys" {
							judge(x, "client.Cmd", kv.Value)
						}
					}
				}
			}
		}
		return true
	})
	return out
}

func isSel(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
