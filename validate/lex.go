package validate

import "strings"

// tokKind classifies a Lua token; the validator needs only these few.
type tokKind int

const (
	tokName   tokKind = iota // identifier or keyword
	tokString                // quoted or long-bracket string; text is the unquoted value
	tokNumber                // numeric literal
	tokPunct                 // operator or bracket, longest match
)

// luaTok is one lexeme with the 1-based line and column it starts at.
type luaTok struct {
	kind tokKind
	text string
	line int
	col  int
}

// lexLua is a small hand tokenizer for Lua 5.1 (the dialect Valkey embeds): enough to find
// redis.call sites and local bindings, not a parser. Comments are dropped; an unterminated
// string or comment ends the token stream rather than failing, so a broken script still
// yields the findings before the break.
func lexLua(src string) []luaTok {
	var toks []luaTok
	line, col := 1, 1
	i := 0
	advance := func(n int) {
		for k := 0; k < n && i < len(src); k++ {
			if src[i] == '\n' {
				line++
				col = 1
			} else {
				col++
			}
			i++
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			advance(1)
		case strings.HasPrefix(src[i:], "--"):
			if lvl, ok := longBracket(src[i+2:]); ok {
				end := strings.Index(src[i+2:], "]"+strings.Repeat("=", lvl)+"]")
				if end < 0 {
					return toks
				}
				advance(2 + end + lvl + 2)
				continue
			}
			for i < len(src) && src[i] != '\n' {
				advance(1)
			}
		case c == '[' && isLongOpen(src[i:]):
			lvl, _ := longBracket(src[i:])
			l, cl := line, col
			body := src[i+lvl+2:]
			end := strings.Index(body, "]"+strings.Repeat("=", lvl)+"]")
			if end < 0 {
				return toks
			}
			text := strings.TrimPrefix(body[:end], "\n")
			advance(lvl + 2 + end + lvl + 2)
			toks = append(toks, luaTok{tokString, text, l, cl})
		case c == '\'' || c == '"':
			l, cl := line, col
			var b strings.Builder
			advance(1)
			for i < len(src) && src[i] != c {
				if src[i] == '\\' && i+1 < len(src) {
					b.WriteByte(src[i+1])
					advance(2)
					continue
				}
				if src[i] == '\n' {
					return toks
				}
				b.WriteByte(src[i])
				advance(1)
			}
			if i >= len(src) {
				return toks
			}
			advance(1)
			toks = append(toks, luaTok{tokString, b.String(), l, cl})
		case isNameStart(c):
			j := i
			for j < len(src) && (isNameStart(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, luaTok{tokName, src[i:j], line, col})
			advance(j - i)
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && (isDigit(src[j]) || isNameStart(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			toks = append(toks, luaTok{tokNumber, src[i:j], line, col})
			advance(j - i)
		default:
			n := 1
			for _, op := range []string{"...", "..", "==", "~=", "<=", ">=", "::"} {
				if strings.HasPrefix(src[i:], op) {
					n = len(op)
					break
				}
			}
			toks = append(toks, luaTok{tokPunct, src[i : i+n], line, col})
			advance(n)
		}
	}
	return toks
}

// longBracket reports whether s opens a long bracket ([[ or [==[) and its level.
func longBracket(s string) (int, bool) {
	if len(s) < 2 || s[0] != '[' {
		return 0, false
	}
	lvl := 1
	for lvl < len(s) && s[lvl] == '=' {
		lvl++
	}
	if lvl < len(s) && s[lvl] == '[' {
		return lvl - 1, true
	}
	return 0, false
}

func isLongOpen(s string) bool { _, ok := longBracket(s); return ok }

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
