package model

import "slices"

// Coalesce joins each write into the previous write to the same key when both are the same
// mergeable command and nothing touched the key between them, so a batch deciding many items
// (an escalation tick) sends one ZADD to the due set, one RPUSH per queue and one HSET per
// contact rather than one per item. Every allowed write touches only its own key (DEL its
// keys), so moving a write ahead of writes to other keys inside the one atomic apply changes
// nothing but the number of calls.
func (o *Ops) Coalesce() {
	type write struct {
		at, n int   // the write in o.args: command, count, then n arguments (the key first)
		more  []any // arguments joined from later writes
	}
	ws := make([]write, 0, o.n)
	last := make(map[string]int, o.n) // key -> index in ws of the last write touching it
	for i := 0; i < len(o.args); {
		cmd, n := o.args[i].(string), o.args[i+1].(int)
		w := write{at: i, n: n}
		i += 2 + n
		if cmd == "DEL" {
			for _, k := range o.args[w.at+2 : i] {
				if s, ok := k.(string); ok {
					last[s] = len(ws)
				}
			}
			ws = append(ws, w)
			continue
		}
		key, ok := o.args[w.at+2].(string)
		if !ok {
			ws = append(ws, w)
			continue
		}
		if j, seen := last[key]; seen && mergeable(cmd) && o.args[ws[j].at] == cmd &&
			ws[j].n+len(ws[j].more)+n-1 <= maxOpArgs {
			ws[j].more = append(ws[j].more, o.args[w.at+3:i]...)
			continue
		}
		last[key] = len(ws)
		ws = append(ws, w)
	}
	if len(ws) == o.n {
		return
	}
	out := make([]any, 0, len(o.args)-2*(o.n-len(ws)))
	for _, w := range ws {
		out = append(out, o.args[w.at], w.n+len(w.more))
		out = append(out, o.args[w.at+2:w.at+2+w.n]...)
		out = append(out, w.more...)
	}
	o.args, o.n = out, len(ws)
}

// mergeable are the writes whose arguments after the key can be joined into the previous write
// of the same command to the same key with the same effect (HSET field pairs, ZADD score
// pairs, pushes and set members, all without options).
func mergeable(cmd string) bool {
	switch cmd {
	case "HSET", "HDEL", "ZADD", "ZREM", "RPUSH", "LPUSH", "SADD", "SREM":
		return true
	}
	return false
}

// AppendAll adds the writes of every part after o's, growing o once.
func (o *Ops) AppendAll(parts []Ops) {
	size := len(o.args)
	for i := range parts {
		size += len(parts[i].args)
	}
	o.args = slices.Grow(o.args, size-len(o.args))
	for i := range parts {
		o.args = append(o.args, parts[i].args...)
		o.n += parts[i].n
	}
}

// Merge adds the parts' guards (each once) and writes to r's, and coalesces the writes: one
// atomic record for decisions taken together (a notifier tick's steps).
func (r *Record) Merge(parts []*Record) {
	seen := make(map[Guard]bool, len(r.Guards))
	for _, g := range r.Guards {
		seen[g] = true
	}
	ops := make([]Ops, 0, len(parts))
	for _, p := range parts {
		for _, g := range p.Guards {
			if !seen[g] {
				seen[g] = true
				r.Guards = append(r.Guards, g)
			}
		}
		ops = append(ops, p.Ops)
	}
	r.Ops.AppendAll(ops)
	r.Ops.Coalesce()
}
