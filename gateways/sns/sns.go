// Package sns is the sns medium (docs/flapjack-1x.md 4.4): each alert of `sns_notifications` is
// published to the Amazon SNS topic named by its address (a topic ARN), with a subject and a
// message, behind the shared queue runner of package gateways. Requests are built and signed
// (Signature Version 4) by the AWS SDK for Go v2 with static credentials; the SDK's own retries
// are off, so the runner's policy (and its dead letters) applies alone. Flapjack 1.x signed
// with Signature Version 2, which broke (#829) and which SNS no longer documents.
package sns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/gateways"
	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// Medium is the medium name (alerts' "media", the list sns_notifications).
const Medium = "sns"

// DefaultRegion is Flapjack 1.x's default region_name.
const DefaultRegion = "us-east-1"

// Limits of Publish: "Subjects must be UTF-8 text with no line breaks or control characters,
// and less than 100 characters long"; messages up to 256 KiB.
const (
	MaxSubject = 99
	MaxMessage = 256 << 10
)

// Config is the gateways.sns section.
type Config struct {
	Region    string        // region_name: where topics whose ARN names no region are; default DefaultRegion
	AccessKey string        // access_key: the access key id
	SecretKey string        // secret_key (secret)
	Endpoint  string        // endpoint: SNS base URL; empty: AWS's endpoint of the topic's region
	Timeout   time.Duration // timeout of one request, default httpsend.DefaultTimeout
}

func (c Config) withDefaults() Config {
	c.Region = strings.TrimSpace(c.Region)
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	c.Endpoint = strings.TrimRight(strings.TrimSpace(c.Endpoint), "/")
	c.Timeout = httpsend.TimeoutOr(c.Timeout)
	return c
}

var region = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// Validate reports every problem, each naming its setting.
func (c Config) Validate() error {
	c = c.withDefaults()
	errs := httpsend.Required(Medium, "access_key", c.AccessKey, "secret_key", c.SecretKey)
	if !region.MatchString(c.Region) {
		errs = append(errs, fmt.Errorf("gateways.%s.region_name %q is not an AWS region (us-east-1, eu-west-2...)", Medium, c.Region))
	}
	if c.Endpoint != "" {
		errs = append(errs, httpsend.CheckEndpoint(Medium, c.Endpoint))
	}
	errs = append(errs, httpsend.CheckTimeout(Medium, c.Timeout))
	return errors.Join(errs...)
}

// Options wire a Sender.
type Options = httpsend.Options[Config]

// Sender publishes alerts to SNS topics; it implements gateways.Sender: nil once SNS returned a
// message id, gateways.Retryable for throttling (429 or a throttling error code, after
// Retry-After), 5xx and network errors, gateways.Permanent for the rest (an unknown topic,
// refused credentials, an invalid parameter).
type Sender struct {
	httpsend.Base // Client is the HTTP client under client
	cfg           Config
	client        *awssns.Client
}

var _ gateways.ReceiptSender = (*Sender)(nil)

// NewSender validates the configuration and builds a Sender.
func NewSender(o Options) (*Sender, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	cfg := o.Config.withDefaults()
	s := &Sender{cfg: cfg, Base: o.Base("sns_sender", cfg.Timeout)}
	opts := awssns.Options{
		Region:      s.cfg.Region,
		Credentials: credentials.NewStaticCredentialsProvider(s.cfg.AccessKey, s.cfg.SecretKey, ""),
		HTTPClient:  s.Client,
		Retryer:     aws.NopRetryer{}, // the gateway runner retries, honouring Retry-After
	}
	if s.cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(s.cfg.Endpoint)
	}
	s.client = awssns.New(opts)
	return s, nil
}

// topicARN is arn:<partition>:sns:<region>:<account>:<name>[.fifo].
var topicARN = regexp.MustCompile(`^arn:aws(-[a-z]+)*:sns:([a-z0-9-]+):[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)

// Send implements gateways.Sender.
func (s *Sender) Send(ctx context.Context, a schema.Alert) error {
	_, err := s.SendReceipt(ctx, a)
	return err
}

// SendReceipt implements gateways.ReceiptSender: the message id is Publish's MessageId.
func (s *Sender) SendReceipt(ctx context.Context, a schema.Alert) (string, error) {
	arn := topicARN.FindStringSubmatch(strings.TrimSpace(a.Address))
	if arn == nil {
		return "", gateways.Permanent(fmt.Errorf("address %q is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<topic>)", a.Address))
	}
	m := gateways.NewMessage(a, s.Loc)
	in := &awssns.PublishInput{TopicArn: aws.String(arn[0]), Message: aws.String(s.message(m)), Subject: aws.String(s.subject(m))}
	if arn[3] != "" { // a FIFO topic: one group per check keeps its alerts in order
		in.MessageGroupId = aws.String(groupID(a.EventID))
		in.MessageDeduplicationId = aws.String(hash(a.ID)) // a retried alert is not published twice
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	out, err := s.client.Publish(ctx, in, func(o *awssns.Options) {
		o.Region = arn[2] // SNS publishes only to topics of the region it is called in
	})
	if err != nil {
		return "", s.classify(err, a)
	}
	id := aws.ToString(out.MessageId)
	s.Log.Debug("message published", zap.String("check", a.EventID), zap.String("message_id", id))
	return id, nil
}

// throttling are the error codes AWS uses for "slow down", whatever the HTTP status.
var throttling = map[string]bool{"Throttled": true, "Throttling": true, "ThrottlingException": true, "KMSThrottling": true,
	"RequestLimitExceeded": true, "TooManyRequestsException": true}

// classify turns an SDK error into the gateways' contract.
func (s *Sender) classify(err error, a schema.Alert) error {
	var invalid smithy.InvalidParamsError
	if errors.As(err, &invalid) {
		return gateways.Permanent(fmt.Errorf("SNS publish for %s: %w", a.EventID, invalid))
	}
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil || re.Response.Response == nil || re.HTTPStatusCode() == 0 {
		// No answer: a network error or the timeout.
		msg := httpsend.Scrub(err.Error(), s.cfg.SecretKey)
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within %s", s.cfg.Timeout)
		}
		return gateways.Retryable(fmt.Errorf("publishing to SNS for %s: %s", a.EventID, msg), 0)
	}
	status, code, detail := re.HTTPStatusCode(), "", ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code, detail = ae.ErrorCode(), ae.ErrorMessage()
	}
	described := fmt.Errorf("SNS answered HTTP %d %s for %s: %s", status, code, a.EventID,
		httpsend.Excerpt([]byte(detail), s.cfg.SecretKey))
	r := httpsend.Response{Status: status, Header: re.Response.Header}
	if throttling[code] && status != http.StatusTooManyRequests {
		r.Status = http.StatusTooManyRequests
	}
	return httpsend.Classify(r, s.Now(), described)
}

// subject is the alert's subject (template alert_subject.text / rollup_subject.text, else
// Flapjack's `<Type>: '<check>' on <entity>[ is <State>]`), made acceptable to SNS: one line
// without control characters, at most MaxSubject characters.
func (s *Sender) subject(m gateways.Message) string {
	name := gateways.TemplateAlertSubject
	if m.Alert.Rollup != nil && *m.Alert.Rollup != "" {
		name = gateways.TemplateRollupSubject
	}
	out := s.render(name, m, Subject)
	out = strings.Join(strings.FieldsFunc(out, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if out == "" {
		out = Subject(m)
	}
	return text.TruncateRunes(out, MaxSubject)
}

// message is the alert's message (template alert.text / rollup.text, else Message), at most
// MaxMessage bytes.
func (s *Sender) message(m gateways.Message) string {
	name := gateways.TemplateAlertText
	if m.Alert.Rollup != nil && *m.Alert.Rollup != "" {
		name = gateways.TemplateRollupText
	}
	out := s.render(name, m, Message)
	if strings.TrimSpace(out) == "" {
		out = Message(m)
	}
	return text.Truncate(out, MaxMessage-len(text.Ellipsis))
}

func (s *Sender) render(name string, m gateways.Message, builtin func(gateways.Message) string) string {
	if s.Tpl == nil {
		return builtin(m)
	}
	return s.Tpl.Render(name, m, builtin, s.Log)
}

// Subject is the built-in subject: `Problem: 'HTTP' on web-01 is Critical`, or for a rollup
// `Problem summary: Critical: 4, Warning: 1`.
func Subject(m gateways.Message) string {
	a := m.Alert
	if a.Rollup != nil && *a.Rollup != "" {
		return m.TypeWords + ": " + gateways.RollupSummary(a)
	}
	s := m.TypeWords + ": '" + m.Check + "' on " + m.Entity
	if m.Entity == "" {
		s = m.TypeWords + ": '" + a.EventID + "'"
	}
	if a.NotificationType != schema.NotificationAcknowledgement && a.NotificationType != schema.NotificationTest {
		s += " is " + m.StateWords
	}
	return s
}

// Message is the built-in message: the SMS media's line, whole, then the check's details when
// it has any.
func Message(m gateways.Message) string {
	s := gateways.ShortText(m, 0)
	if d := strings.TrimSpace(m.Details); d != "" {
		s += "\n\n" + d
	}
	return s
}

// groupID is a FIFO message group id for a check: its id when SNS accepts it (up to 128
// printable ASCII characters, no spaces), else a hash of it.
func groupID(eventID string) string {
	ok := eventID != "" && len(eventID) <= 128 && strings.IndexFunc(eventID, func(r rune) bool { return r <= ' ' || r > '~' }) < 0
	if ok {
		return eventID
	}
	return "check-" + hash(eventID)[:32]
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
