package api

// GET /deliveries: the delivery log (docs/decisions.md D24), read-only, for tools and the phone
// triage page: each alert queued for a contact and what became of it.

import (
	"net/http"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/views"
	"github.com/flapjackgo/flapjack/schema"
)

func (a *jsonAPI) deliveryRoutes(route func(method, path, what string, h apiHandler)) {
	route("GET", "/deliveries", "delivery log: alerts queued and their fate (queued, retrying, delivered, failed), oldest first; "+
		"?check=ENTITY:CHECK&contact=ID&since=(unix seconds or ISO 8601)&limit=N (the newest N, default 1000)", a.getDeliveries)
}

func (a *jsonAPI) getDeliveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := views.DeliveryFilter{Check: q.Get("check"), Contact: q.Get("contact")}
	if f.Check != "" {
		if _, _, ok := schema.SplitCheckID(f.Check); !ok {
			return failWith(http.StatusBadRequest, "check %q is not ENTITY:CHECK", f.Check)
		}
	}
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t, terr := parseISO8601(v)
			if terr != nil {
				return failWith(http.StatusBadRequest, "since %q is neither unix seconds nor an ISO 8601 time", v)
			}
			n = t.Unix()
		}
		f.Since = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return failWith(http.StatusBadRequest, "limit %q is not a positive number", v)
		}
		f.Limit = n
	}
	var recs []schema.DeliveryRecord
	err := a.conn(r, func(c redis.Conn) error {
		var err error
		recs, err = views.ReadDeliveries(c, a.o.Keys, f)
		return err
	})
	if err != nil {
		return err
	}
	if recs == nil {
		recs = []schema.DeliveryRecord{}
	}
	writeAPI(w, http.StatusOK, map[string]any{"deliveries": recs})
	return nil
}
