package retention

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/clock"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
	"github.com/flapjackgo/flapjack/model"
	"github.com/flapjackgo/flapjack/schema"
)

// The delivery log is trimmed by age and by count, each record with its index entries.
func TestSweepForgetsOldAndSurplusDeliveries(t *testing.T) {
	t.Parallel()
	now := int64(1_800_000_000)
	for _, tc := range []struct {
		name   string
		policy Policy
		kept   []int // indexes of the alerts left, alert i queued i days before now
	}{
		{"by age", Policy{MaxAge: 30 * 24 * time.Hour}, []int{0, 10}},
		{"by count", Policy{MaxDeliveries: 3}, []int{0, 10, 40}},
		{"both", Policy{MaxAge: 30 * 24 * time.Hour, MaxDeliveries: 1}, []int{0}},
		{"no limit", Policy{}, []int{0, 10, 40, 70}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := testredis.New(t)
			k := schema.NewKeys("")
			var ops model.Ops
			ages := []int{0, 10, 40, 70}
			for _, age := range ages {
				a := schema.Alert{ID: fmt.Sprintf("a%d", age), Media: "email", EventID: fmt.Sprintf("web-%d:HTTP", age),
					ContactID: "ada", State: "critical", NotificationType: "problem"}
				model.QueueDelivery(&ops, k, a, now-int64(age)*day)
			}
			conn := db.Pool.Get()
			defer conn.Close()
			if _, err := model.Apply(conn, model.ApplyTarget{}, []model.Record{{Ops: ops}}); err != nil {
				t.Fatal(err)
			}
			s := &Sweeper{Pool: db.Pool, Keys: k, Policy: tc.policy, Clock: clock.NewFake(time.Unix(now, 0)), Log: zap.NewNop()}
			st, err := s.Sweep(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if int(st.Deliveries) != len(ages)-len(tc.kept) {
				t.Errorf("forgot %d, want %d", st.Deliveries, len(ages)-len(tc.kept))
			}
			kept := map[int]bool{}
			for _, age := range tc.kept {
				kept[age] = true
			}
			for _, age := range ages {
				id := fmt.Sprintf("a%d", age)
				exists, _ := redis.Bool(db.Do(t, "EXISTS", k.Delivery(id)), nil)
				_, errAll := redis.Float64(db.Do(t, "ZSCORE", k.Deliveries(), id), nil)
				_, errCheck := redis.Float64(db.Do(t, "ZSCORE", k.CheckDeliveries(fmt.Sprintf("web-%d:HTTP", age)), id), nil)
				_, errContact := redis.Float64(db.Do(t, "ZSCORE", k.ContactDeliveries("ada"), id), nil)
				indexed := []bool{errAll == nil, errCheck == nil, errContact == nil}
				for i, in := range indexed {
					if in != kept[age] {
						t.Errorf("alert %d days old: index %d has it %v, want %v", age, i, in, kept[age])
					}
				}
				if exists != kept[age] {
					t.Errorf("alert %d days old: record kept %v, want %v", age, exists, kept[age])
				}
			}
		})
	}
}
