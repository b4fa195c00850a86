package schema

// SlackActionSignatures is the sorted set of the X-Slack-Signature values of the Slack
// interactions accepted in the last five minutes (scored by their X-Slack-Request-Timestamp):
// a request whose signature is in it is a replay and is refused. Older members are forgotten as
// new ones arrive; an older request is refused by its timestamp anyway.
func (k Keys) SlackActionSignatures() string { return k.key("slack_action_signatures") }
