package gateways

import (
	"time"

	"github.com/flapjackgo/flapjack/lifecycle"
)

// SenderStages is the one stage of a medium's gateway, "<medium> gateway": the queue runner of
// medium around sender.
func SenderStages(env Env, medium string, sender Sender) []lifecycle.Stage {
	g := New(env.Delivery(medium), sender)
	return []lifecycle.Stage{{Name: medium + " gateway", Run: g.Run}}
}

// TemplatedStages builds the one-stage gateway of a medium whose sender shows event times and
// renders templates: it reads the timezone (config's DefaultContactTimezone: alerts carry no
// contact timezone), loads the medium's templates
// (LoadTemplates) and hands both to newSender.
func TemplatedStages(env Env, medium string, templates []string,
	newSender func(tpl *Templates, loc *time.Location) (Sender, error)) ([]lifecycle.Stage, error) {
	loc, err := env.Values.DefaultContactTimezone()
	if err != nil {
		return nil, err
	}
	tpl, err := LoadTemplates(env.Values, medium, templates...)
	if err != nil {
		return nil, err
	}
	sender, err := newSender(tpl, loc)
	if err != nil {
		return nil, err
	}
	return SenderStages(env, medium, sender), nil
}
