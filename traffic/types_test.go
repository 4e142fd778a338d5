package traffic

import "github.com/slotgate/slotgate/check"

// The record types the tests below build by hand, named here and nowhere
// else: the types are moving from package check to package history, and
// this file is the one place a rename touches.
type (
	meshSend    = check.MeshSend
	meshSession = check.MeshSession
	meshHistory = check.MeshHistory
	migrationOp = check.MigrationOp
)

// The fencing op kinds the fleet tests feed and expect.
var (
	opAcquire  = check.OpAcquire
	opRenew    = check.OpRenew
	opRelease  = check.OpRelease
	opValidate = check.OpValidate
)

type (
	fencingOp     = check.FencingOp
	fencingOpKind = check.FencingOpKind
)
