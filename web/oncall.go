package web

import (
	"net/http"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/model/views"
)

// oncallData is the on-call report page: the weeks of `flapjack report oncall`.
type oncallData struct {
	From, Until string // as the form shows them (YYYY-MM-DD, UTC)
	Weeks       []oncallRow
	NightStart  int
	NightEnd    int
}

// oncallRow is a week with its delays as plain numbers for the template (0: none).
type oncallRow struct {
	views.OncallWeek
	Median, P90 int64
}

// dateLayout is how the report form reads and shows its dates.
const dateLayout = "2006-01-02"

// oncall shows the on-call report from ?from= to ?until= (dates, UTC; default the last 7 days).
func (s *server) oncall(w http.ResponseWriter, r *http.Request) error {
	now := s.clk.Now().UTC()
	until, err := formDate(r, "until", now.Add(24*time.Hour).Truncate(24*time.Hour))
	if err != nil {
		return err
	}
	from, err := formDate(r, "from", until.AddDate(0, 0, -7))
	if err != nil {
		return err
	}
	if !until.After(from) {
		return errStatus(http.StatusBadRequest, "until must be after from")
	}
	d := oncallData{From: from.Format(dateLayout), Until: until.Format(dateLayout), NightStart: views.NightStart, NightEnd: views.NightEnd}
	err = s.withConn(r, func(conn redis.Conn) error {
		weeks, err := views.OncallReport(conn, s.o.Keys, from.Unix(), until.Unix(), r.URL.Query().Get("contact"), time.UTC)
		for _, w := range weeks {
			row := oncallRow{OncallWeek: w}
			if w.AckMedian != nil {
				row.Median, row.P90 = *w.AckMedian, *w.AckP90
			}
			d.Weeks = append(d.Weeks, row)
		}
		return err
	})
	if err != nil {
		return err
	}
	return s.page(w, r, "oncall", "oncall", "On-call report", false, d)
}

func formDate(r *http.Request, name string, fallback time.Time) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return fallback, nil
	}
	t, err := time.Parse(dateLayout, v)
	if err != nil {
		return t, errStatus(http.StatusBadRequest, "%s %q is not a date (2026-01-05)", name, v)
	}
	return t, nil
}
