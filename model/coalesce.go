package model

// mergeable are the writes whose arguments after the key can be joined into the previous write
// of the same command to the same key with the same effect (HSET field pairs, ZADD score
// pairs, pushes and set members, all without options).
var mergeable = map[string]bool{"HSET": true, "HDEL": true, "ZADD": true, "ZREM": true, "RPUSH": true,
	"LPUSH": true, "SADD": true, "SREM": true}

// Coalesce joins each write into the previous write to the same key when both are the same
// mergeable command and nothing touched the key between them, so a batch deciding many items
// (an escalation tick) sends one ZADD to the due set, one RPUSH per queue and one HSET per
// contact rather than one per item. Every allowed write touches only its own key (DEL its
// keys), so moving a write ahead of writes to other keys inside the one atomic apply changes
// nothing but the number of calls.
func (o *Ops) Coalesce() {
	type write struct {
		cmd  string
		key  any
		args []any // after the key
	}
	var ws []*write
	last := map[any]*write{}
	for i := 0; i < len(o.args); {
		cmd, n := o.args[i].(string), o.args[i+1].(int)
		args := o.args[i+2 : i+2+n]
		i += 2 + n
		if cmd == "DEL" {
			w := &write{cmd: cmd, args: args}
			for _, k := range args {
				last[k] = w
			}
			ws = append(ws, w)
			continue
		}
		key := args[0]
		if prev := last[key]; prev != nil && prev.cmd == cmd && mergeable[cmd] && len(prev.args)+n <= maxOpArgs {
			prev.args = append(prev.args, args[1:]...)
			continue
		}
		w := &write{cmd: cmd, key: key, args: append([]any(nil), args[1:]...)}
		last[key] = w
		ws = append(ws, w)
	}
	out := make([]any, 0, len(o.args))
	for _, w := range ws {
		if w.cmd == "DEL" {
			out = append(out, w.cmd, len(w.args))
			out = append(out, w.args...)
			continue
		}
		out = append(out, w.cmd, 1+len(w.args), w.key)
		out = append(out, w.args...)
	}
	o.args, o.n = out, len(ws)
}
