package config

import (
	"os"
	"time"
)

// DefaultContactTimezone is the timezone of contacts without one, read the one way the notifier
// and the media that print times share: notifier.default_contact_timezone, else the TZ
// environment variable, else UTC. An unknown name is an Invalid error naming the setting.
func (v *Values) DefaultContactTimezone() (*time.Location, error) {
	const key = "notifier.default_contact_timezone"
	zone := v.String(key)
	if zone == "" {
		zone = os.Getenv("TZ")
	}
	if zone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, v.Invalid(key, "unknown timezone %q", zone)
	}
	return loc, nil
}
