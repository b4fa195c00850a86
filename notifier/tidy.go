package notifier

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/model/roster"
)

// The alerting sets of media without rollup (contact_alerting_checks) decide nothing: only
// rollup reads a set. They still say which checks alert each contact, so, as Flapjack does, a
// set is cleaned whenever a problem adds to it (docs/flapjack-1x.md 3.6 step 2): members that are ok, in
// maintenance, disabled or no longer the contact's leave it. Cleaning reads every member, which
// for a contact with a hundred failing checks costs more than routing the problem itself, so it
// is done after the batch's alerts are applied instead of on their way: once per set and batch,
// however many of the batch's problems added to it.
//
// The cleaning is guarded by the contact's revision, read before the set: a notifier that adds
// a check to the set meanwhile (a check found ok that fails again) moves it, and the cleaning is
// dropped rather than removing that check; the next problem on the medium cleans the set. It
// does not move the revision itself, so it never makes another notifier's routing conflict. A
// crash between the apply and the cleaning leaves the set to the next problem as well.

// alertingSet is one contact's medium whose alerting set a routed problem added to.
type alertingSet struct{ contact, medium string }

// tidyAlerting cleans the alerting sets applied plans added to: one round trip reads the
// contacts' revisions and the sets, one or two the members' facts, one applies the removals.
// Failures are logged, never returned: the batch's alerts are applied already, and the next
// problem on a set cleans it.
func (nt *Notifier) tidyAlerting(conn redis.Conn, sets []alertingSet) {
	if len(sets) == 0 {
		return
	}
	now := nt.clock.Now()
	sets = slices.Compact(slices.SortedFunc(slices.Values(sets), func(a, b alertingSet) int {
		return cmp.Or(cmp.Compare(a.contact, b.contact), cmp.Compare(a.medium, b.medium))
	}))
	refs := make([]roster.AlertingSet, len(sets))
	for i, s := range sets {
		refs[i] = roster.AlertingSet{ContactID: s.contact, Medium: s.medium}
	}
	revisions, members, err := roster.ReadAlertingSets(conn, nt.keys, refs)
	if err != nil {
		nt.log.Warn("alerting sets not cleaned; the next problem on each cleans it", zap.Error(err))
		return
	}
	distinct := map[string]bool{}
	for _, ms := range members {
		for _, m := range ms {
			distinct[m] = true
		}
	}
	facts, err := nt.readMembers(conn, distinct, now)
	if err != nil {
		nt.log.Warn("alerting sets not cleaned; the next problem on each cleans it", zap.Error(err))
		return
	}
	records, contacts := roster.CleaningRecords(nt.keys, cleanings(refs, revisions, members, facts, now))
	if len(records) == 0 {
		return
	}
	statuses, err := model.Apply(conn, model.ApplyTarget{}, records)
	if err != nil {
		nt.m.redisErrors.Inc()
		nt.log.Warn("alerting sets not cleaned; the next problem on each cleans it", zap.Error(err))
		return
	}
	for i, s := range statuses {
		if s != model.Applied {
			nt.log.Debug("alerting sets not cleaned: the contact's alerts changed meanwhile; the next problem cleans them",
				zap.String("contact", contacts[i]))
		}
	}
}

// cleanings are the removals from sets (sorted by contact) of the members leaving them, each
// with its contact's revision read before the set.
func cleanings(sets []roster.AlertingSet, revisions map[string]int64, members [][]string, facts memberFacts,
	now time.Time) []roster.SetCleaning {
	var out []roster.SetCleaning
	for i, s := range sets {
		remove := facts.leaving(s.ContactID, members[i], now)
		if len(remove) == 0 {
			continue
		}
		out = append(out, roster.SetCleaning{Set: s, Revision: revisions[s.ContactID], Remove: slices.Sorted(maps.Keys(remove))})
	}
	return out
}
