package status

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/flapjackgo/flapjack/schema"
)

// ProcessStage names the records every flapjack process keeps (process_instance:HOST:PID, in
// the set process_instances), whatever stages it runs.
const ProcessStage = "process"

// Process is one running (or dead) flapjack process and the stages it runs.
type Process struct {
	ID           string   `json:"id"` // HOST:PID
	Host         string   `json:"host"`
	PID          int64    `json:"pid"`
	Version      string   `json:"version"`
	Stages       []string `json:"stages"`
	BootTime     int64    `json:"boot_time"`
	HeartbeatAge int64    `json:"heartbeat_age_seconds"`
	Stale        bool     `json:"stale"`
}

// readProcesses lists the process records, in one round trip after the set.
func readProcesses(conn redis.Conn, keys schema.Keys, stale time.Duration, now time.Time, s *Snapshot) error {
	ids, err := redis.Strings(conn.Do("SMEMBERS", keys.Instances(ProcessStage)))
	if err != nil {
		return fmt.Errorf("list processes: %w", err)
	}
	sort.Strings(ids)
	for _, id := range ids {
		conn.Send("HGETALL", keys.Instance(ProcessStage, id))
	}
	if err := conn.Flush(); err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := redis.StringMap(conn.Receive())
		if err != nil {
			return fmt.Errorf("read process %s: %w", id, err)
		}
		p := Process{ID: id, Host: rec["host"], PID: atoi(rec["pid"]), Version: rec["version"], BootTime: atoi(rec["boot_time"]),
			HeartbeatAge: now.Unix() - atoi(rec["heartbeat"])}
		if st := rec["stages"]; st != "" {
			p.Stages = strings.Split(st, ",")
		}
		p.Stale = len(rec) == 0 || time.Duration(p.HeartbeatAge)*time.Second > stale
		s.Processes = append(s.Processes, p)
	}
	return nil
}
