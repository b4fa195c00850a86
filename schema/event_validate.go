package schema

import "strconv"

// ValidateEvent applies the event rules to an event built field by field (a receiver reading
// another format), as ParseEvent applies them to the same event sent as JSON with each
// non-empty optional text and each Has* number present: it returns the event normalised, or a
// *RejectError listing every broken rule in ParseEvent's words. The encoded event's size
// (MaxEventBytes) is the caller's to check, as only the encoding knows it.
func ValidateEvent(e Event) (Event, error) {
	var m eventMembers
	for i, s := range [...]string{mType: e.Type, mState: e.State, mEntity: e.Entity, mCheck: e.Check,
		mSummary: e.Summary, mDetails: e.Details, mPerfdata: e.Perfdata, mAckID: e.AcknowledgementID} {
		if s != "" || i <= mCheck {
			m.v[i] = value{kind: kindString, text: s}
		}
	}
	var num [5][20]byte
	for j, n := range [...]struct {
		member int
		v      int64
		has    bool
	}{{mTime, e.Time, e.HasTime}, {mDuration, e.Duration, e.HasDuration}, {mInitialDelay, e.InitialFailureDelay, e.HasInitialDelay}, {mRepeatDelay, e.RepeatFailureDelay, e.HasRepeatDelay}, {mTTL, e.TTL, e.HasTTL}} {
		if n.has {
			m.v[n.member] = value{kind: kindOther, raw: strconv.AppendInt(num[j][:0], n.v, 10)}
		}
	}
	if e.Stale {
		m.v[mStale] = value{kind: kindOther, raw: []byte("true")}
	}
	if e.Tags != nil {
		m.v[mTags].kind, m.tags = kindList, e.Tags
	}
	var r reasons
	v := m.validate(&r)
	if r.failed() {
		return Event{}, &RejectError{Reasons: r.list}
	}
	return v, nil
}
