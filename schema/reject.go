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
