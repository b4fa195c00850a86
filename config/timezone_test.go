package config_test

import (
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/config"
)

func TestDefaultContactTimezone(t *testing.T) {
	for _, tc := range []struct {
		zone, tz, want string
		bad            bool
	}{
		{zone: "", tz: "", want: "UTC"},
		{zone: "", tz: "Asia/Tokyo", want: "Asia/Tokyo"},
		{zone: "Europe/Berlin", tz: "Asia/Tokyo", want: "Europe/Berlin"},
		{zone: "Mars/Olympus", bad: true},
	} {
		t.Setenv("TZ", tc.tz)
		v, err := config.Load(config.Core, "", fakeSource{"notifier-default-contact-timezone": tc.zone}, nil)
		if err != nil {
			t.Fatal(err)
		}
		loc, err := v.DefaultContactTimezone()
		if tc.bad {
			if err == nil || !strings.Contains(err.Error(), "notifier.default_contact_timezone") {
				t.Errorf("%q: error %v, want one naming the setting", tc.zone, err)
			}
			continue
		}
		if err != nil || loc.String() != tc.want {
			t.Errorf("zone %q, TZ %q: %v %v, want %s", tc.zone, tc.tz, loc, err, tc.want)
		}
	}
}
