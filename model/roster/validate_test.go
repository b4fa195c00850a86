package roster_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/flapjackgo/flapjack/model/roster"
)

func fieldErrors(err error) []string {
	var v *roster.ValidationError
	if !errors.As(err, &v) {
		return nil
	}
	out := make([]string, len(v.Errors))
	for i, f := range v.Errors {
		out[i] = f.Error()
	}
	return out
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{name: "valid contact", err: roster.ValidateContact(fixture()[0])},
		{name: "contact", err: roster.ValidateContact(roster.ContactData{ID: "", ContactInfo: roster.ContactInfo{Timezone: "Nowhere"},
			Tags: []string{"ok", " "}, Media: []roster.Medium{{Name: "jabber", Address: "a@j"}, {Name: "jabber", Address: "b@j"}},
			Rules: []roster.Rule{{ID: "r", ContactID: "bob"}, {ID: "r", Entities: []string{""}}}}),
			want: []string{
				"id: must not be empty",
				`timezone: unknown time zone "Nowhere"`,
				"tags[1]: must not be empty",
				"media.jabber: given twice",
				`notification_rules[0].contact_id: is "bob", not the id of this contact`,
				`notification_rules[1].id: rule id "r" is also used by notification_rules[0]`,
				"notification_rules[1].entities[0]: must not be empty",
			}},
		{name: "medium", err: roster.ValidateMedium(roster.Medium{Name: "sms", Interval: ptr(0), RollupThreshold: ptr(-2)}),
			want: []string{
				"media.sms.rollup_threshold: must be an integer of at least 0",
				"media.sms.address: must not be empty",
				"media.sms.interval: must be an integer of at least 1",
			}},
		{name: "bad medium name", err: roster.ValidateMedium(roster.Medium{Name: "9lives", Address: "x"}),
			want: []string{`media.9lives: medium "9lives": names are lower-case letters, digits and _`}},
		{name: "valid rule", err: roster.ValidateRule(roster.Rule{ID: "r", TimeRestrictions: " null "})},
		{name: "rule", err: roster.ValidateRule(roster.Rule{RegexTags: []string{"a", "a)"}, TimeRestrictions: `[{"end_date": "x"}, 5]`,
			CriticalMedia: []string{"Email"}}),
			want: []string{
				"id: must not be empty",
				"regex_tags[1]: pattern \"a)\" does not compile as a Go RE2 regular expression: error parsing regexp: unexpected ): `a)`",
				"time_restrictions[0].start_time: is required",
				"time_restrictions[1]: must be an object",
				`critical_media[0]: medium "Email": names are lower-case letters, digits and _`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if len(tc.want) == 0 {
				if tc.err != nil {
					t.Fatalf("err = %v", tc.err)
				}
				return
			}
			if !errors.Is(tc.err, roster.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", tc.err)
			}
			if got := fieldErrors(tc.err); !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestContactWarnings(t *testing.T) {
	t.Parallel()
	c := roster.ContactData{ID: "ada", ContactInfo: roster.ContactInfo{Timezone: "Europe/London"},
		Media: []roster.Medium{{Name: "email", Address: "a@example.com"}},
		Rules: []roster.Rule{{ID: "r", CriticalMedia: []string{"email", "sms", "sms"},
			TimeRestrictions: `[{"start_time": "2013-02-01 09:00:00", "end_time": "2013-02-01 17:00:00", "rrule": "FREQ=DAILY", "rrules": [{"rule_type": "Daily"}]}]`}}}
	got := roster.ContactWarnings(c)
	if len(got) != 2 || got[1] != `contact "ada": rule "r" lists "sms" in critical_media, but the contact has no sms address` {
		t.Errorf("warnings = %q", got)
	}
	if w := roster.RuleWarnings(roster.Rule{ID: "r", ContactID: "ada", TimeRestrictions: c.Rules[0].TimeRestrictions}); len(w) != 1 || w[0] != got[0] {
		t.Errorf("rule warnings = %q, want %q", w, got[:1])
	}
}
