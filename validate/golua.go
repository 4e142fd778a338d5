package validate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// CheckGo runs the Go rule (multi-key commands, script calls, pipelines and transactions:
// see gocmd.go) on a Go file and
// applies the Lua rule to Lua embedded in its string literals (any literal containing
// "redis.call(" or "redis.pcall("), e.g. client.NewScript sources and consts like
// impl/guard's limiter. Findings point into the Go file.
func CheckGo(name string, src []byte) ([]Finding, error) {
	return defaultTable.CheckGo(name, src)
}

// CheckGo is the Go rule with t's command table.
func (t *Table) CheckGo(name string, src []byte) ([]Finding, error) {
	if !strings.Contains(string(src), "redis") && !strings.Contains(string(src), "valkey") && !strings.Contains(string(src), "client.") {
		return nil, nil // no client code and no embedded script: skip the parse
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	out := t.checkGoCmds(name, fset, f)
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || !(strings.Contains(lit.Value, "redis.call(") || strings.Contains(lit.Value, "redis.pcall(")) {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		out = append(out, t.CheckLua(name, s, fset.Position(lit.Pos()).Line)...)
		return true
	})
	return out, nil
}
