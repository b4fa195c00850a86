package api

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flapjackgo/flapjack/events"
)

// TestDinerContract replays the requests flapjack-diner 1.4 sends (api/testdata/diner-contract.json)
// and checks the status codes, Location headers and body shapes it relies on.
func TestDinerContract(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/diner-contract.json")
	if err != nil {
		t.Fatal(err)
	}
	var contract struct {
		Steps []struct {
			Name, Method, Path string
			Headers            map[string]string
			Body               json.RawMessage
			Status             int
			BodyIs             json.RawMessage `json:"body_is"`
			Location           string
		}
	}
	if err := json.Unmarshal(data, &contract); err != nil {
		t.Fatal(err)
	}
	srv, _ := apiServer(t, func(o *Options) { o.BaseURL = ""; o.Events = events.NewPublisher(o.Pool, o.Keys, "events") })
	for _, s := range contract.Steps {
		var header []string
		ctype := ""
		for k, v := range s.Headers {
			if strings.EqualFold(k, "Content-Type") {
				ctype = v
				continue
			}
			header = append(header, k, v)
		}
		a := call(t, srv, s.Method, s.Path, ctype, string(s.Body), header...)
		if a.status != s.Status {
			t.Fatalf("%s: %s %s answered %d, want %d: %s", s.Name, s.Method, s.Path, a.status, s.Status, a.body)
		}
		if s.Location != "" && a.header.Get("Location") != srv.URL+s.Location {
			t.Fatalf("%s: Location %q, want %q", s.Name, a.header.Get("Location"), srv.URL+s.Location)
		}
		if s.BodyIs == nil {
			if len(a.body) != 0 {
				t.Fatalf("%s: body %s, want none", s.Name, a.body)
			}
			continue
		}
		if ct := a.header.Get("Content-Type"); ct != jsonAPIType {
			t.Fatalf("%s: Content-Type %q", s.Name, ct)
		}
		var want, got any
		json.Unmarshal(s.BodyIs, &want)
		if err := json.Unmarshal(a.body, &got); err != nil {
			t.Fatalf("%s: body %q is not JSON", s.Name, a.body)
		}
		if err := contains(got, want, "body"); err != nil {
			t.Fatalf("%s: %v\n%s", s.Name, err, a.body)
		}
	}
}

// contains checks that got has what want says: objects at least want's members, arrays
// exactly want's elements, "<any>" anything.
func contains(got, want any, at string) error {
	if want == "<any>" {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, got)
		}
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: no member %q", at, k)
			}
			if err := contains(gv, v, at+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: %v, want %d elements", at, got, len(w))
		}
		for i := range w {
			if err := contains(g[i], w[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if got != want {
		return fmt.Errorf("%s: %v, want %v", at, got, want)
	}
	return nil
}
