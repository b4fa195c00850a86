package schema

// SlackActionSignatures is the sorted set of the X-Slack-Signature values of the Slack
// interactions accepted in the last five minutes (scored by their X-Slack-Request-Timestamp):
// a request whose signature is in it is a replay and is refused. Older members are forgotten as
// new ones arrive; an older request is refused by its timestamp anyway.
func (k Keys) SlackActionSignatures() string { return k.key("slack_action_signatures") }

// SMSReplyCodes is the hash of the reply codes live for one phone number (digits only, no "+"
// or "00"): field CODE (4 digits) → {"check","contact","alert","medium","expires"} as JSON. An SMS alert
// ending "Reply ACK CODE" wrote it; a reply "ACK CODE" from that number within the lifetime
// acknowledges the check and removes the code; expired codes are removed when the next one is
// issued (an EXPIRE of a day past the lifetime only collects a number that gets no more SMS).
func (k Keys) SMSReplyCodes(number string) string { return k.key("sms_reply_codes", number) }

// SMSReplyFailures is the hash counting one number's replies that named no live code: fields
// `count` and `since` (unix seconds of the first); past the limit, replies from the number are
// refused until a code lifetime after `since`.
func (k Keys) SMSReplyFailures(number string) string { return k.key("sms_reply_failures", number) }
