package notifier_test

import (
	"time"

	"github.com/flapjackgo/flapjack/notifier"
)

func testRestrictions() notifier.TimeRestrictions { return nil }

var _ = time.Second
