package judge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slotgate/slotgate/check"
)

// negotiatedProtocol is the protocol row's negotiation checker (spec 000
// §Conformance, Protocol choice: "admitted by test, never assumed"): every
// connection named name speaks RESP want, and every node of nodes carries at
// least one such connection (a pool that never reached a node proves
// nothing about it).
func negotiatedProtocol(conns []check.ClientConn, name string, want int, nodes []string) check.Result {
	const checker = "negotiated-protocol"
	perNode := map[string]int{}
	byResp := map[int]int{}
	var bad []string
	for _, c := range conns {
		if c.Name != name {
			continue
		}
		perNode[c.Node]++
		byResp[c.Resp]++
		if c.Resp != want && len(bad) < 5 {
			bad = append(bad, fmt.Sprintf("%s id=%s name=%s resp=%d", c.Node, c.ID, c.Name, c.Resp))
		}
	}
	total := 0
	for _, n := range perNode {
		total += n
	}
	var obs []string
	for _, n := range nodes {
		obs = append(obs, fmt.Sprintf("%s: %d connection(s) named %s", n, perNode[n], name))
	}
	var resps []string
	for r, n := range byResp {
		resps = append(resps, fmt.Sprintf("resp=%d ×%d", r, n))
	}
	sort.Strings(resps)
	if wrong := total - byResp[want]; wrong > 0 {
		r := check.Failf(checker, strings.Join(bad, "\n"), "%d of %d connections named %s do not speak RESP%d (%s)", wrong, total, name, want, strings.Join(resps, ", "))
		r.Observed = obs
		return r
	}
	for _, n := range nodes {
		if perNode[n] == 0 {
			r := check.Unknownf(checker, "no connection named %s on %s: the protocol it speaks there is unobserved", name, n)
			r.Observed = obs
			return r
		}
	}
	if total == 0 {
		return check.Unknownf(checker, "no connection named %s at all", name)
	}
	r := check.Passf(checker, "all %d connections named %s on %d nodes speak RESP%d", total, name, len(nodes), want)
	r.Observed = obs
	return r
}

// ShapeFor is the shape the server sends for op under RESP proto.
func ShapeFor(op string, proto int) string {
	switch {
	case op == "ZSCORE" && proto == 3:
		return "float64"
	case op == "ZSCORE":
		return "string"
	case op == "HGETALL" && proto == 3:
		return "map"
	case op == "HGETALL":
		return "array"
	}
	return ""
}

// replyShapes is the protocol row's reply-shape checker: every read got a
// reply of the shape RESP proto sends (the protocol is really in effect at
// the reply level), and the decoder turned each into exactly the written
// value. A decoder that refuses a shape fails loudly (DecodeErr); one that
// decodes to another value fails silently — both are failures here.
func replyShapes(reads []ShapeRead, proto, minReads int) check.Result {
	const checker = "reply-shapes"
	if len(reads) < minReads {
		return check.Unknownf(checker, "only %d typed reads, need %d", len(reads), minReads)
	}
	var cmdErr, decodeErr, wrongShape, wrongValue int
	var bad []string
	note := func(format string, args ...any) {
		if len(bad) < 5 {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	for _, r := range reads {
		switch {
		case r.Err != "":
			cmdErr++
			note("%s %s: error %s", r.Op, r.Key, r.Err)
		case r.Shape != ShapeFor(r.Op, proto):
			wrongShape++
			note("%s %s: reply shape %s, RESP%d sends %s", r.Op, r.Key, r.Shape, proto, ShapeFor(r.Op, proto))
		case r.DecodeErr != "":
			decodeErr++
			note("%s %s: decoder refused the %s reply: %s", r.Op, r.Key, r.Shape, r.DecodeErr)
		case r.Got != r.Want:
			wrongValue++
			note("%s %s: decoded %q, want %q", r.Op, r.Key, r.Got, r.Want)
		}
	}
	if n := cmdErr + decodeErr + wrongShape + wrongValue; n > 0 {
		return check.Failf(checker, strings.Join(bad, "\n"), "%d of %d typed reads wrong under RESP%d: %d decode errors, %d wrong values, %d wrong shapes, %d command errors",
			n, len(reads), proto, decodeErr, wrongValue, wrongShape, cmdErr)
	}
	return check.Passf(checker, "%d typed reads (ZSCORE, HGETALL) had RESP%d shapes and decoded exactly", len(reads), proto)
}

// DecodeErrors counts the reads whose decoder refused the reply: a failure
// that is loud rather than a silently wrong value.
func DecodeErrors(reads []ShapeRead) int {
	n := 0
	for _, r := range reads {
		if r.DecodeErr != "" {
			n++
		}
	}
	return n
}

// replyShapesLoud is replyShapes for a decoder that must fail loudly (spec
// 000 §Conformance, Protocol choice: a decoder written for the other
// protocol must error, never return a silently wrong value): its failure
// counts only when at least one read was a decode error. A failure with
// none is reported as a pass — the variant ran, and was not caught for the
// reason it models.
func replyShapesLoud(reads []ShapeRead, proto, minReads int) check.Result {
	r := replyShapes(reads, proto, minReads)
	if r.Status == check.Fail && DecodeErrors(reads) == 0 {
		r.Status = check.Pass
	}
	return r
}

// NegotiatedInput is every node's CLIENT LIST, the pool's connection name,
// the RESP version it must speak and the nodes it must reach
// (negotiatedProtocol).
type NegotiatedInput struct {
	Conns []check.ClientConn
	Name  string
	Want  int
	Nodes []string
}

// ShapesInput is the typed reads, the RESP version whose shapes they must
// have, and the fewest reads that make a verdict (replyShapes,
// replyShapesLoud).
type ShapesInput struct {
	Reads    []ShapeRead
	Proto    int
	MinReads int
}

// The row's checkers, by stable name; each input struct lists the old
// reflective checker's arguments in order, so histories stored under the
// old names replay.
var (
	NegotiatedProtocol = check.Define("protocol/negotiated", func(in NegotiatedInput) check.Result {
		return negotiatedProtocol(in.Conns, in.Name, in.Want, in.Nodes)
	}, "NegotiatedProtocol")
	ReplyShapes = check.Define("protocol/reply-shapes", func(in ShapesInput) check.Result {
		return replyShapes(in.Reads, in.Proto, in.MinReads)
	}, "ReplyShapes")
	ReplyShapesLoud = check.Define("protocol/reply-shapes-loud", func(in ShapesInput) check.Result {
		return replyShapesLoud(in.Reads, in.Proto, in.MinReads)
	}, "ReplyShapesLoud")
)
