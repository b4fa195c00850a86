//go:build race

package timerestriction

func init() { raceEnabled = true }
