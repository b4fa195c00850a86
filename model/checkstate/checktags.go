package checkstate

import (
	"context"
	"fmt"
	"slices"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/schema"
)

// checkTagsAmong are the tags among known (known_tags:check_tag) that the API gave each of ids
// (check_tag:TAG), by check id.
func checkTagsAmong(ctx context.Context, conn redis.Conn, keys schema.Keys, known, ids []string) (map[string][]string, error) {
	tags := slices.Sorted(slices.Values(known))
	setKeys := make([]string, len(tags))
	for i, t := range tags {
		setKeys[i] = keys.CheckTag(t)
	}
	_, members, err := redisread.Memberships(ctx, conn, setKeys, ids)
	if err != nil {
		return nil, fmt.Errorf("read check tags: %w", err)
	}
	out := map[string][]string{}
	for i, t := range tags {
		for id := range members[i] {
			out[id] = append(out[id], t)
		}
	}
	return out, nil
}
