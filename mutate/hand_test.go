package mutate

import "github.com/slotgate/slotgate/validate"

func validateHand() *validate.Table { return validate.Hand("test") }
