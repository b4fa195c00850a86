package testproviders

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Amazon SNS Publish, AWS query protocol, signed with Signature Version 4:
//
//	POST /
//	Content-Type: application/x-www-form-urlencoded
//	X-Amz-Date: 20260105T100000Z
//	Authorization: AWS4-HMAC-SHA256 Credential=AKID/20260105/us-east-1/sns/aws4_request,
//	    SignedHeaders=content-type;host;x-amz-date, Signature=<64 hex>
//	Action=Publish&Version=2010-03-31&TopicArn=arn:aws:sns:us-east-1:123456789012:ops&Message=...&Subject=...
//
// answered 200 with <PublishResponse><PublishResult><MessageId>, errors as <ErrorResponse>.
// The signature is recomputed here from the secret key and must match.

const (
	// SNSMaxSubject: "Subjects must be UTF-8 text with no line breaks or control characters,
	// and less than 100 characters long."
	SNSMaxSubject = 99
	// SNSMaxMessage is the largest message in bytes (256 KiB).
	SNSMaxMessage = 262144
	// SNSMaxSkew is how far X-Amz-Date may be from the server's clock (RequestTimeTooSkewed).
	SNSMaxSkew = 15 * time.Minute
)

var (
	snsTopicARN      = regexp.MustCompile(`^arn:aws(-[a-z]+)*:sns:([a-z0-9-]+):([0-9]{12}):([A-Za-z0-9_-]{1,256})(\.fifo)?$`)
	sigV4            = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/([0-9]{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$`)
	snsDedupOrGroup  = regexp.MustCompile("^[A-Za-z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1,128}$")
	snsMessageFields = []string{"Action", "Version", "TopicArn", "TargetArn", "PhoneNumber", "Message", "Subject",
		"MessageStructure", "MessageGroupId", "MessageDeduplicationId"}
)

// SNSMessageID is the MessageId the server gives the message it publishes from a request body
// (a UUID, as SNS's are): each distinct message has its own, and a test can tell which request
// an id came from.
func SNSMessageID(body []byte) string {
	h := sha256.Sum256(body)
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// SNS is the Publish contract for the credentials, in region.
func SNS(accessKey, secretKey, region string) Contract {
	return Contract{
		Name: "Amazon SNS Publish",
		Check: func(r *http.Request, body []byte) ([]string, int) {
			if problems := checkSigV4(r, body, accessKey, secretKey, region, "sns", time.Now()); len(problems) > 0 {
				return problems, http.StatusForbidden
			}
			problems := requireMethodAndType(r, http.MethodPost, "application/x-www-form-urlencoded")
			if r.URL.Path != "/" && r.URL.Path != "" {
				problems = append(problems, "path must be /, got "+r.URL.Path)
			}
			form, err := url.ParseQuery(string(body))
			if err != nil {
				return append(problems, "InvalidParameter: body is not form-encoded"), http.StatusBadRequest
			}
			for k := range form {
				if !contains(snsMessageFields, k) && !strings.HasPrefix(k, "MessageAttributes.") {
					problems = append(problems, fmt.Sprintf("InvalidParameter: unknown parameter %q", k))
				}
			}
			if form.Get("Action") != "Publish" || form.Get("Version") != "2010-03-31" {
				problems = append(problems, fmt.Sprintf("InvalidAction: Action=%q Version=%q, want Publish 2010-03-31", form.Get("Action"), form.Get("Version")))
			}
			arn := snsTopicARN.FindStringSubmatch(form.Get("TopicArn"))
			fifo := false
			switch {
			case arn == nil:
				problems = append(problems, fmt.Sprintf("InvalidParameter: Invalid parameter: TopicArn %q", form.Get("TopicArn")))
			case arn[2] != region:
				problems = append(problems, fmt.Sprintf("InvalidParameter: TopicArn is in %s, the request was signed for %s", arn[2], region))
			default:
				fifo = arn[5] != ""
			}
			msg := form.Get("Message")
			switch {
			case msg == "":
				problems = append(problems, "InvalidParameter: Empty message")
			case len(msg) > SNSMaxMessage:
				problems = append(problems, fmt.Sprintf("InvalidParameter: Message too long (%d bytes)", len(msg)))
			case !utf8.ValidString(msg):
				problems = append(problems, "InvalidParameter: Message is not UTF-8")
			}
			if form.Has("Subject") {
				problems = append(problems, checkSNSSubject(form.Get("Subject"))...)
			}
			group, dedup := form.Get("MessageGroupId"), form.Get("MessageDeduplicationId")
			switch {
			case fifo && (!snsDedupOrGroup.MatchString(group) || !snsDedupOrGroup.MatchString(dedup)):
				problems = append(problems, fmt.Sprintf("InvalidParameter: a FIFO topic needs MessageGroupId and MessageDeduplicationId (up to 128 ASCII letters, digits, punctuation), got %q and %q", group, dedup))
			case !fifo && (form.Has("MessageGroupId") || form.Has("MessageDeduplicationId")):
				problems = append(problems, "InvalidParameter: MessageGroupId and MessageDeduplicationId apply to FIFO topics only")
			}
			return problems, http.StatusBadRequest
		},
		Success: func(w http.ResponseWriter, req Request) {
			w.Header().Set("Content-Type", "text/xml")
			seq := ""
			if strings.HasSuffix(req.Form.Get("TopicArn"), ".fifo") {
				seq = "<SequenceNumber>10000000000000003000</SequenceNumber>"
			}
			_, _ = fmt.Fprintf(w, `<PublishResponse xmlns="https://sns.amazonaws.com/doc/2010-03-31/"><PublishResult>`+
				`<MessageId>%s</MessageId>%s</PublishResult>`+
				`<ResponseMetadata><RequestId>f187a3c1-376f-11df-8963-01868b7c937a</RequestId></ResponseMetadata></PublishResponse>`,
				SNSMessageID(req.Body), seq)
		},
		Failure: func(w http.ResponseWriter, status int, message string) {
			code, kind := "InvalidParameter", "Sender"
			switch status {
			case http.StatusForbidden:
				code = "AuthorizationError"
				if strings.HasPrefix(message, "SignatureDoesNotMatch") || strings.HasPrefix(message, "IncompleteSignature") ||
					strings.HasPrefix(message, "RequestTimeTooSkewed") || strings.HasPrefix(message, "InvalidClientTokenId") {
					code, _, _ = strings.Cut(message, ":")
				}
			case http.StatusNotFound:
				code = "NotFound"
			case http.StatusTooManyRequests:
				code = "Throttled"
			case http.StatusInternalServerError:
				code, kind = "InternalError", "Receiver"
			case http.StatusServiceUnavailable:
				code, kind = "ServiceUnavailable", "Receiver"
			}
			var msg strings.Builder
			_ = xml.EscapeText(&msg, []byte(message))
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `<ErrorResponse xmlns="https://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>%s</Type>`+
				`<Code>%s</Code><Message>%s</Message></Error><RequestId>9dd01905-5012-5f99-8663-4b3ecd0dfaef</RequestId></ErrorResponse>`,
				kind, code, msg.String())
		},
	}
}

func checkSNSSubject(s string) []string {
	var problems []string
	if n := utf8.RuneCountInString(s); n == 0 || n > SNSMaxSubject {
		problems = append(problems, fmt.Sprintf("InvalidParameter: Subject must be 1 to %d characters, got %d", SNSMaxSubject, n))
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		problems = append(problems, fmt.Sprintf("InvalidParameter: Subject has a line break or control character: %q", s))
	}
	if r, _ := utf8.DecodeRuneInString(s); s != "" && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsPunct(r) {
		problems = append(problems, fmt.Sprintf("InvalidParameter: Subject must start with a letter, number or punctuation mark: %q", s))
	}
	return problems
}

// checkSigV4 verifies a request's Signature Version 4 Authorization header for the
// credentials, region and service, recomputing the signature from the request as received.
func checkSigV4(r *http.Request, body []byte, accessKey, secretKey, region, service string, now time.Time) []string {
	auth := r.Header.Get("Authorization")
	m := sigV4.FindStringSubmatch(auth)
	if m == nil {
		return []string{fmt.Sprintf("IncompleteSignature: Authorization is not an AWS4-HMAC-SHA256 header: %q", auth)}
	}
	key, date, reg, svc, signed, signature := m[1], m[2], m[3], m[4], strings.Split(m[5], ";"), m[6]
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse("20060102T150405Z", amzDate)
	switch {
	case key != accessKey:
		return []string{"InvalidClientTokenId: The security token included in the request is invalid (access key " + key + ")"}
	case err != nil:
		return []string{fmt.Sprintf("IncompleteSignature: X-Amz-Date %q is not yyyyMMddTHHmmssZ", amzDate)}
	case amzDate[:8] != date:
		return []string{"SignatureDoesNotMatch: the credential scope's date is not the X-Amz-Date's"}
	case reg != region || svc != service:
		return []string{fmt.Sprintf("SignatureDoesNotMatch: credential scope %s/%s, want %s/%s", reg, svc, region, service)}
	case at.Sub(now) > SNSMaxSkew || now.Sub(at) > SNSMaxSkew:
		return []string{"RequestTimeTooSkewed: Signature expired: " + amzDate + " is more than 15 minutes from the server's time"}
	case !sort.StringsAreSorted(signed) || !contains(signed, "host") || !contains(signed, "x-amz-date"):
		return []string{"IncompleteSignature: SignedHeaders must be sorted and include host and x-amz-date: " + m[5]}
	}
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hashHex(body) {
		return []string{"XAmzContentSHA256Mismatch: X-Amz-Content-Sha256 is not the body's hash"}
	}
	var canon strings.Builder
	canon.WriteString(r.Method + "\n" + canonicalURI(r.URL) + "\n" + canonicalQuery(r.URL.Query()) + "\n")
	for _, h := range signed {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		default:
			v = strings.Join(r.Header.Values(h), ",")
		}
		canon.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	canon.WriteString("\n" + strings.Join(signed, ";") + "\n" + hashHex(body))
	scope := date + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hashHex([]byte(canon.String()))
	k := hmacSHA256([]byte("AWS4"+secretKey), date)
	for _, part := range []string{region, service, "aws4_request"} {
		k = hmacSHA256(k, part)
	}
	if want := hex.EncodeToString(hmacSHA256(k, toSign)); !hmac.Equal([]byte(want), []byte(signature)) {
		return []string{"SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided"}
	}
	return nil
}

func canonicalURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		return "/"
	}
	return p
}

func canonicalQuery(q url.Values) string {
	var parts []string
	for k, vs := range q {
		for _, v := range vs {
			parts = append(parts, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "&")
}

// awsEscape percent-encodes all but the unreserved characters, as SigV4 wants.
func awsEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func hashHex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
