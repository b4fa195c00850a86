package httpsend

import (
	"strings"
	"time"

	"github.com/flapjackgo/flapjack/config"
	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/lifecycle"
)

// TimeoutSetting is the gateways.<medium>.timeout setting every HTTP medium has.
func TimeoutSetting(medium string) config.Setting {
	return config.Setting{Key: "gateways." + medium + ".timeout", Kind: config.Duration, Default: "10s", Usage: "HTTP request timeout"}
}

// Stages is the one-stage gateway of an HTTP medium whose sender renders templates
// (gateways.TemplatedStages): configFrom reads the medium's settings, newSender builds its
// Sender from them, the templates, the location event times are shown in and the logger.
func Stages[C any, S gateways.Sender](env gateways.Env, medium string, templates []string,
	configFrom func(*config.Values) C, newSender func(Options[C]) (S, error)) ([]lifecycle.Stage, error) {
	return gateways.TemplatedStages(env, medium, templates, func(tpl *gateways.Templates, loc *time.Location) (gateways.Sender, error) {
		s, err := newSender(Options[C]{Config: configFrom(env.Values), Templates: tpl, Location: loc, Log: env.Log})
		if err != nil {
			return nil, err
		}
		return s, nil
	})
}

// TidyNumber removes from a phone number the spaces, dashes, dots and brackets people write
// in it ("+61 414 123-456" → "+61414123456").
func TidyNumber(address string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()\t", r) {
			return -1
		}
		return r
	}, address)
}

// TimeoutOr is timeout, or DefaultTimeout when it is not set (0).
func TimeoutOr(timeout time.Duration) time.Duration {
	if timeout == 0 {
		return DefaultTimeout
	}
	return timeout
}
