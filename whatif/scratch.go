package whatif

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/importer"
	"github.com/flapjackgo/flapjack/internal/redisread"
	"github.com/flapjackgo/flapjack/model/inventory"
	"github.com/flapjackgo/flapjack/model/roster"
	"github.com/flapjackgo/flapjack/oncall"
	"github.com/flapjackgo/flapjack/schema"
)

// Space is where one scenario runs: a Redis (or a private key prefix of one) that nothing
// else uses. It must start empty.
type Space struct {
	Pool *redis.Pool
	Keys schema.Keys
}

// liveConfig is what routing reads, as the live Redis holds it.
type liveConfig struct {
	contacts []roster.StoredContact
	entities []inventory.EntityData
	policies []roster.EscalationPolicy
	// interest are the contacts_for sets: ENTITY_ID, ALL or ENTITY_ID:CHECK -> contact ids
	interest map[string][]string
	// schedules are the on-call schedules, and scheduled the entity_schedules sets: ENTITY_ID
	// -> schedule ids
	schedules []*oncall.Schedule
	scheduled map[string][]string
}

// readLiveConfig reads contacts (media, intervals, rollup thresholds, timezones, rules),
// entities and which contacts are interested in what. Only reads.
func readLiveConfig(ctx context.Context, conn redis.Conn, keys schema.Keys) (*liveConfig, error) {
	ids, err := roster.ContactIDs(ctx, conn, keys)
	if err != nil {
		return nil, err
	}
	contacts, err := roster.ReadContacts(ctx, conn, keys, ids, false)
	if err != nil {
		return nil, err
	}
	entityIDs, err := inventory.EntityIDs(conn, keys)
	if err != nil {
		return nil, err
	}
	entities, err := inventory.ReadEntities(ctx, conn, keys, entityIDs)
	if err != nil {
		return nil, err
	}
	policies, _, err := roster.EscalationPolicies(conn, keys)
	if err != nil {
		return nil, err
	}
	cfg := &liveConfig{contacts: contacts, policies: policies, interest: map[string][]string{}}
	for _, e := range entities {
		cfg.entities = append(cfg.entities, inventory.EntityData{ID: e.ID, Name: e.Name})
	}
	names, err := redisread.ScanSets(ctx, conn, keys.ContactsFor(""))
	if err != nil {
		return nil, err
	}
	var b redisread.Batch
	for _, n := range names {
		b.Add("SMEMBERS", keys.ContactsFor(n))
	}
	if err := b.Run(ctx, conn); err != nil {
		return nil, fmt.Errorf("read contacts_for: %w", err)
	}
	for i, n := range names {
		cfg.interest[n] = b.Strs(i)
	}
	if err := cfg.readSchedules(ctx, conn, keys); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readSchedules reads the on-call schedules and which entities route to them.
func (cfg *liveConfig) readSchedules(ctx context.Context, conn redis.Conn, keys schema.Keys) error {
	var err error
	if cfg.schedules, _, err = roster.Schedules(conn, keys); err != nil {
		return err
	}
	entityIDs, err := redisread.ScanSets(ctx, conn, keys.EntitySchedules(""))
	if err != nil {
		return err
	}
	cfg.scheduled, err = roster.EntitySchedules(conn, keys, entityIDs)
	return err
}

// writeSchedules copies the schedules (before the escalation policies, whose steps may name
// them) and the entities' schedule sets.
func (cfg *liveConfig) writeSchedules(ctx context.Context, conn redis.Conn, keys schema.Keys) ([]string, error) {
	var notes []string
	if len(cfg.schedules) > 0 {
		res, err := roster.PutSchedules(ctx, conn, keys, cfg.schedules, roster.ReplaceOptions{Partial: true})
		if err != nil {
			return nil, fmt.Errorf("copy schedules: %w", err)
		}
		for _, p := range res.Problems {
			notes = append(notes, fmt.Sprintf("live schedule %s left out: %v", cfg.schedules[p.Index].ID, p.FieldError))
		}
	}
	for id, schedules := range cfg.scheduled {
		args := []any{keys.EntitySchedules(id)}
		for _, s := range schedules {
			args = append(args, s)
		}
		if _, err := conn.Do("SADD", args...); err != nil {
			return nil, fmt.Errorf("copy entity_schedules:%s: %w", id, err)
		}
	}
	return notes, nil
}

// write copies the configuration into a scratch space, through the same model writes the
// API and the importer use. Contacts the model refuses are reported, not fatal: the scenario
// runs without them, as the live notifier would skip them.
func (cfg *liveConfig) write(ctx context.Context, s Space) ([]string, error) {
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var notes []string
	if len(cfg.entities) > 0 {
		if err := inventory.CreateEntities(ctx, conn, s.Keys, cfg.entities); err != nil {
			return nil, fmt.Errorf("copy entities: %w", err)
		}
	}
	if len(cfg.contacts) > 0 {
		data := make([]roster.ContactData, len(cfg.contacts))
		for i, c := range cfg.contacts {
			data[i] = c.ContactData
		}
		res, err := roster.ReplaceContacts(ctx, conn, s.Keys, data, roster.ReplaceOptions{Partial: true})
		if err != nil {
			return nil, fmt.Errorf("copy contacts: %w", err)
		}
		for _, p := range res.Problems {
			notes = append(notes, fmt.Sprintf("live contact %s left out: %v", data[p.Index].ID, p.FieldError))
		}
	}
	scheduleNotes, err := cfg.writeSchedules(ctx, conn, s.Keys)
	if err != nil {
		return nil, err
	}
	notes = append(notes, scheduleNotes...)
	if len(cfg.policies) > 0 {
		res, err := roster.PutEscalationPolicies(ctx, conn, s.Keys, cfg.policies, roster.ReplaceOptions{Partial: true})
		if err != nil {
			return nil, fmt.Errorf("copy escalation policies: %w", err)
		}
		for _, p := range res.Problems {
			notes = append(notes, fmt.Sprintf("live escalation policy %s left out: %v", cfg.policies[p.Index].ID, p.FieldError))
		}
	}
	for name, members := range cfg.interest {
		if len(members) == 0 {
			continue
		}
		args := []any{s.Keys.ContactsFor(name)}
		for _, m := range members {
			args = append(args, m)
		}
		conn.Send("SADD", args...)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("copy contacts_for: %w", err)
	}
	for name, members := range cfg.interest {
		if len(members) == 0 {
			continue
		}
		if _, err := conn.Receive(); err != nil {
			return nil, fmt.Errorf("copy contacts_for:%s: %w", name, err)
		}
	}
	return notes, nil
}

// applyImport changes the candidate space with an import file (contacts, rules, escalations or
// schedules):
// what `flapjack import` would do to the live data.
func applyImport(ctx context.Context, s Space, what string, data []byte) ([]string, error) {
	f := importer.Contacts
	switch what {
	case "rules":
		f = importer.Rules
	case "escalations":
		f = importer.Escalations
	case "schedules":
		f = importer.Schedules
	}
	conn, err := s.Pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rep, err := f(ctx, conn, s.Keys, data, importer.Options{})
	if errors.Is(err, importer.ErrInvalid) {
		var problems []string
		for _, p := range rep.Problems {
			problems = append(problems, p.String())
		}
		return nil, fmt.Errorf("--%s: %w:\n  %s", what, err, strings.Join(problems, "\n  "))
	}
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", what, err)
	}
	return []string{fmt.Sprintf("candidate: imported %d %s", rep.Imported, what)}, nil
}
