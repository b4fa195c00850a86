package schema

import "errors"

// RejectReasons is every reason of a parse error: the RejectError's reasons, else the error's
// text (for producers that report why an event was refused).
func RejectReasons(err error) []string {
	var rej *RejectError
	if errors.As(err, &rej) {
		return rej.Reasons
	}
	return []string{err.Error()}
}

// RejectedReason is one record of events_rejected_reasons:YYYYMMDDHH, at the position of its raw
// input in events_rejected:YYYYMMDDHH: why the executive, or a receiver (Source), refused it.
type RejectedReason struct {
	Time    int64    `json:"time"`
	Reasons []string `json:"reasons"`
	// Event is the raw input, truncated to RejectedInputMax bytes.
	Event string `json:"event"`
	// Source names the receiver that refused a line before it became an event ("nagios",
	// "nsca", "sensu", "json"); absent for the executive's rejections.
	Source string `json:"source,omitempty"`
}

// RejectedInputMax bounds the raw input kept in a RejectedReason.
const RejectedInputMax = 1024
