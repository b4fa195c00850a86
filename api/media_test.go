package api

import "testing"

func TestParseMediumID(t *testing.T) {
	for _, tc := range []struct{ id, contact, medium string }{
		{"abc_email", "abc", "email"},
		{"ops_team_sms_twilio", "ops_team", "sms_twilio"},
		{"ops_team_sms_nexmo", "ops_team", "sms_nexmo"},
		{"ops_sms", "ops", "sms"},
		{"ops_team_webhook", "ops_team", "webhook"},
		{"ops_team_log", "ops_team", "log"},
		{"a_custom", "a", "custom"},
	} {
		ref, err := parseMediumID(tc.id)
		if err != nil || ref.ContactID != tc.contact || ref.Name != tc.medium {
			t.Errorf("%s: %+v %v, want contact %q medium %q", tc.id, ref, err, tc.contact, tc.medium)
		}
	}
	for _, bad := range []string{"email", "_email", "abc_"} {
		if _, err := parseMediumID(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestKnownMediumTypesFollowTheRegistry(t *testing.T) {
	want := map[string]bool{"webhook": true, "sms_nexmo": true, "sms_twilio": true, "log": true}
	for _, m := range knownMediumTypes {
		delete(want, m)
	}
	if len(want) != 0 {
		t.Errorf("media missing from %v: %v", knownMediumTypes, want)
	}
}
