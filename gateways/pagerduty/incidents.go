package pagerduty

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flapjackgo/flapjack/gateways/internal/httpsend"
	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/model/roster"
)

// REST API paging: incidents asked per page, and pages read at most per query.
const (
	pageLimit = 100
	maxPages  = 20
)

// isoTime is the time format of since/until (ISO 8601, UTC).
const isoTime = "2006-01-02T15:04:05Z"

// v2Accept selects the REST API v2.
const v2Accept = "application/vnd.pagerduty+json;version=2"

// ackLookup is the outcome of a query: whether an acknowledged incident exists, and who
// acknowledged it when PagerDuty says.
type ackLookup struct {
	found bool
	by    string
}

// apiError is a failed REST query. Refused (401, 403, 429) means the credentials should not be
// used again in this run.
type apiError struct {
	err     error
	refused bool
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// incidentQuerier asks PagerDuty's REST API for acknowledged incidents.
type incidentQuerier struct {
	cfg    Config
	client *http.Client
}

// acknowledged looks for an acknowledged incident with incidentKey created within
// [since, until]: REST v2 with a token, else REST v1 of the subdomain with basic auth.
func (q incidentQuerier) acknowledged(ctx context.Context, c roster.PagerdutyCredentials, incidentKey string, since, until time.Time) (ackLookup, error) {
	if c.Token != "" {
		return q.v2(ctx, c, incidentKey, since, until)
	}
	return q.v1(ctx, c, incidentKey, since, until)
}

type v2Incidents struct {
	Incidents []struct {
		IncidentKey      string `json:"incident_key"`
		Status           string `json:"status"`
		Acknowledgements []struct {
			At           string `json:"at"`
			Acknowledger struct {
				Summary string `json:"summary"`
			} `json:"acknowledger"`
		} `json:"acknowledgements"`
	} `json:"incidents"`
	More bool `json:"more"`
}

func (q incidentQuerier) v2(ctx context.Context, c roster.PagerdutyCredentials, incidentKey string, since, until time.Time) (ackLookup, error) {
	// The offset moves by what came back: PagerDuty may answer fewer than the limit asked.
	offset := 0
	for page := 0; page < maxPages; page++ {
		v := url.Values{}
		v.Set("statuses[]", "acknowledged")
		v.Set("incident_key", incidentKey)
		v.Set("since", since.UTC().Format(isoTime))
		v.Set("until", until.UTC().Format(isoTime))
		v.Set("limit", strconv.Itoa(pageLimit))
		v.Set("offset", strconv.Itoa(offset))
		req, err := http.NewRequest(http.MethodGet, q.cfg.APIBaseURL+"/incidents?"+v.Encode(), nil)
		if err != nil {
			return ackLookup{}, &apiError{err: fmt.Errorf("REST v2 request: %w", err)}
		}
		req.Header.Set("Authorization", "Token token="+c.Token)
		req.Header.Set("Accept", v2Accept)
		var body v2Incidents
		if err := q.get(ctx, req, &body, c.Token); err != nil {
			return ackLookup{}, err
		}
		for _, inc := range body.Incidents {
			if inc.Status != "acknowledged" || (inc.IncidentKey != "" && inc.IncidentKey != incidentKey) {
				continue
			}
			r := ackLookup{found: true}
			latest := ""
			for _, a := range inc.Acknowledgements {
				// RFC 3339 UTC times compare as strings; the latest acknowledger wins.
				if name := cleanName(a.Acknowledger.Summary); name != "" && a.At >= latest {
					r.by, latest = name, a.At
				}
			}
			return r, nil
		}
		if !body.More || len(body.Incidents) == 0 {
			break
		}
		offset += len(body.Incidents)
	}
	return ackLookup{}, nil
}

type v1Incidents struct {
	Incidents []struct {
		Status             string `json:"status"`
		LastStatusChangeBy *struct {
			Name string `json:"name"`
		} `json:"last_status_change_by"`
	} `json:"incidents"`
	Total  int `json:"total"`
	Offset int `json:"offset"`
}

var subdomainRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

func (q incidentQuerier) v1(ctx context.Context, c roster.PagerdutyCredentials, incidentKey string, since, until time.Time) (ackLookup, error) {
	if !subdomainRE.MatchString(c.Subdomain) {
		return ackLookup{}, &apiError{err: fmt.Errorf("subdomain %q is not a host name label", c.Subdomain), refused: true}
	}
	base := fmt.Sprintf(q.cfg.V1APIURLTemplate, c.Subdomain)
	offset := 0
	for page := 0; page < maxPages; page++ {
		v := url.Values{}
		v.Set("fields", "incident_number,status,last_status_change_by")
		v.Set("since", since.UTC().Format(isoTime))
		v.Set("until", until.UTC().Format(isoTime))
		v.Set("incident_key", incidentKey)
		v.Set("status", "acknowledged")
		if page > 0 {
			v.Set("offset", strconv.Itoa(offset))
			v.Set("limit", strconv.Itoa(pageLimit))
		}
		req, err := http.NewRequest(http.MethodGet, base+"/incidents?"+v.Encode(), nil)
		if err != nil {
			return ackLookup{}, &apiError{err: fmt.Errorf("REST v1 request: %w", err)}
		}
		req.SetBasicAuth(c.Username, c.Password)
		req.Header.Set("Accept", "application/json")
		var body v1Incidents
		if err := q.get(ctx, req, &body, c.Username, c.Password); err != nil {
			return ackLookup{}, err
		}
		for _, inc := range body.Incidents {
			if inc.Status != "acknowledged" {
				continue
			}
			r := ackLookup{found: true}
			if inc.LastStatusChangeBy != nil {
				r.by = cleanName(inc.LastStatusChangeBy.Name)
			}
			return r, nil
		}
		if len(body.Incidents) == 0 || body.Offset+len(body.Incidents) >= body.Total {
			break
		}
		offset = body.Offset + len(body.Incidents)
	}
	return ackLookup{}, nil
}

// get runs a REST query and decodes its JSON answer into out.
func (q incidentQuerier) get(ctx context.Context, req *http.Request, out any, secrets ...string) error {
	resp, err := do(ctx, q.client, q.cfg.Timeout, req)
	if err != nil {
		return &apiError{err: httpsend.ScrubError(err, secrets...)}
	}
	switch {
	case resp.Status == http.StatusOK:
	case resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden || resp.Status == http.StatusTooManyRequests:
		return &apiError{refused: true, err: fmt.Errorf("%s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.Status, errorMessage(resp.Body, secrets...))}
	default:
		return &apiError{err: fmt.Errorf("%s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.Status, errorMessage(resp.Body, secrets...))}
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			err = errors.New("the answer is not JSON")
		}
		return &apiError{err: fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)}
	}
	return nil
}

// cleanName keeps a person's name printable and short for an event summary.
func cleanName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return text.TruncateRunes(strings.Join(strings.Fields(s), " "), 100)
}
