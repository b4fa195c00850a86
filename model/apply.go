package model

import (
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
)

var (
	//go:embed scripts/apply.lua
	applySource string
	applyScript = NewScript(applySource)
)

// Script is a Lua script run by EVALSHA, loaded by the first EVAL after a NOSCRIPT, as redigo's
// Script.Do does; but Run takes the arguments with room left at their head, where Script.Do
// copies each argument list of every batch to prepend the hash.
type Script struct {
	*redis.Script
	src, sha string
}

// ScriptHead is the room Run needs at the head of its arguments (hash, key count).
const ScriptHead = 2

// NewScript makes the script of Lua source src.
func NewScript(src string) Script {
	h := sha1.Sum([]byte(src))
	return Script{Script: redis.NewScript(0, src), src: src, sha: hex.EncodeToString(h[:])}
}

// argsPool recycles the argument lists of script calls: a batch's list holds a few thousand
// values, and allocating it anew for every batch is a good part of the garbage per event.
var argsPool sync.Pool

// NewArgs returns an empty argument list with room for size values, from argsPool when it has one.
func NewArgs(size int) []any {
	if p, ok := argsPool.Get().(*[]any); ok && cap(*p) >= size {
		return (*p)[:0]
	}
	return make([]any, 0, size)
}

// Recycle clears args (dropping what they reference) and keeps them for NewArgs.
func Recycle(args []any) {
	clear(args)
	args = args[:0]
	argsPool.Put(&args)
}

// Run calls the script with args[ScriptHead:]; it writes args[:ScriptHead].
func (s Script) Run(conn redis.Conn, args []any) (any, error) {
	args[0], args[1] = s.sha, 0
	reply, err := conn.Do("EVALSHA", args...)
	if isNoScript(err) {
		args[0] = s.src
		reply, err = conn.Do("EVAL", args...)
	}
	return reply, err
}

// send writes the EVALSHA Run makes without waiting for its reply.
func (s Script) send(conn redis.Conn, args []any) error {
	args[0], args[1] = s.sha, 0
	if err := conn.Send("EVALSHA", args...); err != nil {
		return err
	}
	return conn.Flush()
}

func isNoScript(err error) bool {
	e, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(e), "NOSCRIPT ")
}

// Ops is an ordered list of Redis writes, built by the domain functions of this package and
// executed by Apply inside one script.
type Ops struct {
	args []any
	n    int
}

// opsCap is the room a record's ops start with: most events write one hash of a few fields.
const opsCap = 16

func (o *Ops) add(cmd string, args ...any) {
	if o.args == nil {
		o.args = make([]any, 0, max(opsCap, 2+len(args)))
	}
	o.args = append(o.args, cmd, len(args))
	o.args = append(o.args, args...)
	o.n++
}

// maxOpArgs bounds the members of one write: the apply script unpacks each write's arguments
// onto the Lua stack, which holds about 8000 values. Longer writes are split.
const maxOpArgs = 1000

// addSplit adds cmd key items..., as several writes when items are many; step keeps pairs
// (field, value) together.
func (o *Ops) addSplit(cmd, key string, items []any, step int) {
	for {
		n := min(len(items), maxOpArgs-maxOpArgs%step)
		if o.args == nil {
			o.args = make([]any, 0, max(opsCap, 3+n))
		}
		o.args = append(o.args, cmd, 1+n, key)
		o.args = append(o.args, items[:n]...)
		o.n++
		items = items[n:]
		if len(items) == 0 {
			return
		}
	}
}

// Append adds other's writes after o's.
func (o *Ops) Append(other Ops) {
	o.args = append(o.args, other.args...)
	o.n += other.n
}

// Len is the number of writes.
func (o *Ops) Len() int { return o.n }

// HSet sets hash fields (pairs of field, value).
func (o *Ops) HSet(key string, fieldValues ...any) { o.addSplit("HSET", key, fieldValues, 2) }

// HDel deletes hash fields.
func (o *Ops) HDel(key string, fields ...any) { o.addSplit("HDEL", key, fields, 1) }

// Set sets a string.
func (o *Ops) Set(key string, value any) { o.add("SET", key, value) }

// SetEx sets a string with a time to live (seconds, at least 1).
func (o *Ops) SetEx(key string, value any, ttl int64) {
	if ttl < 1 {
		ttl = 1
	}
	o.add("SET", key, value, "EX", ttl)
}

// Del deletes keys.
func (o *Ops) Del(keys ...any) {
	for len(keys) > maxOpArgs {
		o.add("DEL", keys[:maxOpArgs]...)
		keys = keys[maxOpArgs:]
	}
	o.add("DEL", keys...)
}

// Expire sets a key's time to live.
func (o *Ops) Expire(key string, ttl int64) { o.add("EXPIRE", key, ttl) }

// ZAdd adds one member with a score.
func (o *Ops) ZAdd(key string, score any, member any) { o.add("ZADD", key, score, member) }

// ZRem removes members.
func (o *Ops) ZRem(key string, members ...any) { o.addSplit("ZREM", key, members, 1) }

// RPush appends values.
func (o *Ops) RPush(key string, values ...any) { o.addSplit("RPUSH", key, values, 1) }

// LPush prepends values.
func (o *Ops) LPush(key string, values ...any) { o.addSplit("LPUSH", key, values, 1) }

// LTrim keeps a list's elements start..stop.
func (o *Ops) LTrim(key string, start, stop int64) { o.add("LTRIM", key, start, stop) }

// SAdd adds set members.
func (o *Ops) SAdd(key string, members ...any) { o.addSplit("SADD", key, members, 1) }

// SRem removes set members.
func (o *Ops) SRem(key string, members ...any) { o.addSplit("SREM", key, members, 1) }

// HIncrBy increments a hash field.
func (o *Ops) HIncrBy(key, field string, by int64) { o.add("HINCRBY", key, field, by) }

// Record is one unit Apply writes atomically: the ops of one claimed item (or of one admin
// action when Item is empty).
type Record struct {
	// Item is the claimed payload to remove from the processing list ("" for none).
	Item string
	// Slot is the item's place in its claimed batch (0 = the oldest), which names it in the
	// processing list when ApplyTarget.ListLen leaves the items out.
	Slot int
	// Guards are hashes whose "revision" field must still hold the value read, and keys that
	// must still not exist.
	Guards []Guard
	// Counter is the event_counters field to increment ("ok", "failure", "action", "invalid").
	Counter string
	Ops     Ops
}

// Guard is a hash read before deciding, with the revision it had; or, Absent, a key that did
// not exist when the decision was taken and must not exist when it is applied.
type Guard struct {
	Key      string
	Revision int64
	Absent   bool
	// Keep leaves the revision where it is when the record applies: its writes change nothing
	// a decision reads (tidying), so they must not make other writers' records conflict.
	Keep bool
}

// Status is the outcome of one record.
type Status int

const (
	// Applied means the writes are done and the item is finished.
	Applied Status = 1
	// Conflict means the check changed since it was read: nothing was written, re-read and retry.
	Conflict Status = 0
	// Lost means the item was requeued by a peer that judged this instance dead: nothing was
	// written and the item must be dropped here (the peer processes it).
	Lost Status = -1
)

// ApplyTarget names the lists and counters of the batch.
type ApplyTarget struct {
	Processing       string // processing list ("" for admin actions)
	Counters         string // event_counters ("" for none)
	InstanceCounters string // event_counters:HOST:PID ("" for none)
	PerMinute        string // stats:events:<minute> ("" for none)
	PerMinuteTTL     int64
	// ListLen > 0 says the processing list's ListLen oldest items are exactly the records' items
	// (a whole claimed batch, or a part of one applied in parts, the rest of the batch newer),
	// each record's at its Slot counted from the oldest. Apply then leaves the items out of the
	// call but the oldest and newest, and names them by slot; when the list's tail is not theirs
	// (a peer requeued items, or an earlier part was not applied), the call is sent again with
	// the items. Receiving a batch's items back cost Redis ~1.2 µs per record.
	ListLen int
	// Indexes are the checks to mark current, each written when the record that touched it
	// applies (nil for none).
	Indexes *Indexes
}

// ApplyArgs builds the script arguments; exposed for pipelining several stages' writes.
func ApplyArgs(t ApplyTarget, records []Record) []any { return applyArgs(0, t, records) }

// applyArgs builds the script arguments after head free values.
func applyArgs(head int, t ApplyTarget, records []Record) []any {
	var shapes recordShapes
	size := head + 11 + t.Indexes.size()
	for i := range records {
		r := &records[i]
		size += 4 + 2*len(r.Guards) + len(r.Ops.args)
		if r.shaped() {
			shapes.add(r)
		}
	}
	args := NewArgs(size)[:head]
	args = append(args, t.Processing, t.Counters, t.InstanceCounters, t.PerMinute, t.PerMinuteTTL, len(records), t.ListLen)
	args = appendListEnds(args, t.ListLen, records)
	args = append(args, t.Indexes.touched())
	args = shapes.appendTo(args)
	for i := range records {
		r := &records[i]
		var item any = r.Item
		if t.ListLen > 0 && r.Item != "" {
			item = r.Slot
		}
		if k := shapes.of(r); k >= 0 {
			args = r.appendShaped(args, item, k)
			continue
		}
		if r.shortForm() {
			args = r.appendShort(args, item)
			continue
		}
		args = append(args, item, len(r.Guards))
		for _, g := range r.Guards {
			if g.Absent {
				args = append(args, g.Key, "")
				continue
			}
			args = append(args, g.Key, strconv.FormatInt(g.Revision, 10))
		}
		args = append(args, r.Counter, r.Ops.n)
		args = append(args, r.Ops.args...)
	}
	return t.Indexes.args(args)
}

// shortForm reports whether r can go in the apply script's short form: its first guard a
// revision on the hash its first write HSETs, every other guard a key that must not exist.
func (r *Record) shortForm() bool {
	if len(r.Guards) == 0 || r.Ops.n == 0 || r.Guards[0].Absent {
		return false
	}
	if cmd, _ := r.Ops.args[0].(string); cmd != "HSET" {
		return false
	}
	if key, _ := r.Ops.args[2].(string); key != r.Guards[0].Key {
		return false
	}
	for _, g := range r.Guards[1:] {
		if !g.Absent {
			return false
		}
	}
	return true
}

// appendShort appends r in the short form: the guarded hash and its revision, the absent keys,
// the counter, the first HSET's values without its command and key, then the other ops.
func (r *Record) appendShort(args []any, item any) []any {
	g := r.Guards[0]
	args = append(args, item, "H", g.Key, strconv.FormatInt(g.Revision, 10), len(r.Guards)-1)
	for _, a := range r.Guards[1:] {
		args = append(args, a.Key)
	}
	n := r.Ops.args[1].(int)
	args = append(args, r.Counter, n-1)
	args = append(args, r.Ops.args[3:2+n]...)
	args = append(args, r.Ops.n-1)
	return append(args, r.Ops.args[2+n:]...)
}

// shaped reports whether r can go in the apply script's shaped form: a short-form record whose
// only write is its hash's HSET of whole field and value pairs (the shape counts its fields).
func (r *Record) shaped() bool {
	return r.Ops.n == 1 && len(r.Ops.args)%2 == 1 && r.shortForm()
}

// sameShape reports whether shaped records r and o share their counter, their number of absent
// keys and their HSET's field names, so the script can take all but their values once.
func (r *Record) sameShape(o *Record) bool {
	if r.Counter != o.Counter || len(r.Guards) != len(o.Guards) || r.Ops.args[1] != o.Ops.args[1] {
		return false
	}
	for j := 3; j < len(r.Ops.args); j += 2 {
		if f, ok := r.Ops.args[j].(string); !ok || f != o.Ops.args[j] {
			return false
		}
	}
	return true
}

// appendShaped appends r in the shaped form of shape k: the guarded hash and its revision, the
// absent keys, the HSET's values.
func (r *Record) appendShaped(args []any, item any, k int) []any {
	g := r.Guards[0]
	args = append(args, item, shapeMarkers[k], g.Key, strconv.FormatInt(g.Revision, 10))
	for _, a := range r.Guards[1:] {
		args = append(args, a.Key)
	}
	for j := 4; j < len(r.Ops.args); j += 2 {
		args = append(args, r.Ops.args[j])
	}
	return args
}

// shapeMarkers name the shapes in a record; a batch's records take at most this many shapes
// (the executive's are one or two: ok results with the same or a new summary).
var shapeMarkers = [...]string{"S1", "S2", "S3", "S4"}

// recordShapes are a batch's record shapes, each known by the first record of that shape.
type recordShapes struct {
	first [len(shapeMarkers)]*Record
	n     int
}

// add takes note of shaped record r's shape, when there is room for a new one.
func (s *recordShapes) add(r *Record) {
	if s.of(r) < 0 && s.n < len(s.first) {
		s.first[s.n] = r
		s.n++
	}
}

// of is the index of shaped record r's shape, -1 for a record that goes in another form.
func (s *recordShapes) of(r *Record) int {
	if s.n == 0 || !r.shaped() {
		return -1
	}
	for k, f := range s.first[:s.n] {
		if f == r || f.sameShape(r) {
			return k
		}
	}
	return -1
}

// appendTo appends the shapes section: their count, then each one's counter, absent key count,
// field count and field names.
func (s *recordShapes) appendTo(args []any) []any {
	args = append(args, s.n)
	for _, r := range s.first[:s.n] {
		args = append(args, r.Counter, len(r.Guards)-1, (len(r.Ops.args)-3)/2)
		for j := 3; j < len(r.Ops.args); j += 2 {
			args = append(args, r.Ops.args[j])
		}
	}
	return args
}

// WriteError reports writes Redis refused inside an otherwise applied batch.
type WriteError struct{ Messages []string }

func (e *WriteError) Error() string {
	return fmt.Sprintf("%d writes refused by Redis: %v", len(e.Messages), e.Messages)
}

// bumpsRevision reports whether ops already set key's revision (an HSET of the field).
func (o *Ops) bumpsRevision(key string) bool {
	for i := 0; i < len(o.args); {
		cmd, n := o.args[i].(string), o.args[i+1].(int)
		if cmd == "HSET" && o.args[i+2] == key {
			for j := i + 3; j+1 < i+2+n; j += 2 {
				if f, ok := o.args[j].(string); ok && f == "revision" {
					return true
				}
			}
		}
		i += 2 + n
	}
	return false
}

// Apply writes records in one atomic script and returns each one's status. Every guard's
// revision moves on with an applied record (unless the guard is Keep): callers fold the new
// value into an HSET of theirs, and Apply adds one where they did not. A record whose Absent
// guard's key exists is a conflict. Writes Redis refused (wrong key types) are returned as a *WriteError together with
// the statuses: those records are finished anyway, so callers log the error and carry on.
func Apply(conn redis.Conn, t ApplyTarget, records []Record) ([]Status, error) {
	return PrepareApply(t, records).Do(conn)
}

// ApplyCall is an Apply whose arguments are built: a caller applying a batch in parts builds the
// next part's while Redis runs the previous one, so Redis waits only for the call to be sent.
type ApplyCall struct {
	t       ApplyTarget
	records []Record
	args    []any
}

// PrepareApply builds the call Apply makes (it folds each guard's next revision into the
// records, as Apply does).
func PrepareApply(t ApplyTarget, records []Record) *ApplyCall {
	c := &ApplyCall{t: t, records: records}
	if len(records) == 0 {
		return c
	}
	for i := range records {
		r := &records[i]
		for _, g := range r.Guards {
			if !g.Absent && !g.Keep && !r.Ops.bumpsRevision(g.Key) {
				r.Ops.HSet(g.Key, "revision", g.Revision+1)
			}
		}
	}
	if t.ListLen > 0 && !slotsFill(records, t.ListLen) {
		c.t.ListLen = 0
	}
	c.args = applyArgs(ScriptHead, c.t, records)
	return c
}

// ErrSendAgain is Receive's answer when the call wrote nothing and must be run again with Do
// once no other reply is pending on the connection: Redis did not know the script (it
// restarted), or the processing list no longer held the records' items where ListLen said (a
// peer requeued some; Do then sends the items).
var ErrSendAgain = errors.New("apply writes: the call must be sent again")

// LoadApplyScript has Redis load the apply script, which it forgot if Receive answered
// ErrSendAgain for NOSCRIPT: calls already sent behind that one fail alike, but later ones find
// it.
func LoadApplyScript(conn redis.Conn) error {
	if _, err := conn.Do("SCRIPT", "LOAD", applyScript.src); err != nil {
		return fmt.Errorf("load the apply script: %w", err)
	}
	return nil
}

// SendItems makes the call send its records' items instead of naming them by slot.
func (c *ApplyCall) SendItems() {
	if c.t.ListLen == 0 || len(c.records) == 0 {
		return
	}
	c.release()
	c.t.ListLen = 0
	c.args = applyArgs(ScriptHead, c.t, c.records)
}

// Do runs the call on conn and returns each record's status (see Apply). A call is run once.
func (c *ApplyCall) Do(conn redis.Conn) ([]Status, error) {
	if len(c.records) == 0 {
		return nil, nil
	}
	reply, err := applyScript.Run(conn, c.args)
	c.release()
	if listMoved(reply, c.t) {
		c.SendItems()
		reply, err = applyScript.Run(conn, c.args)
		c.release()
	}
	return c.decode(reply, err)
}

// Send writes the call to conn without waiting for its reply, which Receive reads: meanwhile the
// caller may prepare and send the next call and use other connections.
func (c *ApplyCall) Send(conn redis.Conn) error {
	if len(c.records) == 0 {
		return nil
	}
	if err := applyScript.send(conn, c.args); err != nil {
		c.release()
		return fmt.Errorf("apply writes: %w", err)
	}
	return nil
}

// Receive reads the reply of Send and returns each record's status (see Apply), or
// ErrSendAgain.
func (c *ApplyCall) Receive(conn redis.Conn) ([]Status, error) {
	if len(c.records) == 0 {
		return nil, nil
	}
	reply, err := conn.Receive()
	if isNoScript(err) || listMoved(reply, c.t) {
		// replies to calls sent after this one may be pending: Do would read them
		return nil, ErrSendAgain
	}
	c.release()
	return c.decode(reply, err)
}

// listMoved reports the script's ITEMS answer to a call that left the items out.
func listMoved(reply any, t ApplyTarget) bool {
	s, ok := reply.(string)
	return ok && s == "ITEMS" && t.ListLen > 0
}

// release hands the call's arguments back to argsPool.
func (c *ApplyCall) release() {
	if c.args != nil {
		Recycle(c.args)
		c.args = nil
	}
}

func (c *ApplyCall) decode(reply any, err error) ([]Status, error) {
	statuses, err := DecodeApply(reply, err)
	if err != nil {
		return statuses, err
	}
	if len(statuses) != len(c.records) {
		return nil, fmt.Errorf("apply writes: %d statuses for %d records", len(statuses), len(c.records))
	}
	return statuses, nil
}

// appendListEnds appends the items of the records at slots 0 and listLen - 1, by which the
// script knows the list's tail is theirs ("" and "" when the items are sent).
func appendListEnds(args []any, listLen int, records []Record) []any {
	var oldest, newest string
	if listLen > 0 {
		for i := range records {
			switch r := &records[i]; {
			case r.Item == "":
			case r.Slot == 0:
				oldest = r.Item
			case r.Slot == listLen-1:
				newest = r.Item
			}
		}
		if listLen == 1 {
			newest = oldest
		}
	}
	return append(args, oldest, newest)
}

// slotsFill reports whether the records with an item name each slot of a batch of n once.
func slotsFill(records []Record, n int) bool {
	seen := make([]bool, n)
	count := 0
	for i := range records {
		r := &records[i]
		if r.Item == "" {
			continue
		}
		if r.Slot < 0 || r.Slot >= n || seen[r.Slot] {
			return false
		}
		seen[r.Slot] = true
		count++
	}
	return count == n
}

// SendApply queues the apply call writing records, without folding the guards' next revisions
// into them or reading its reply: for a writer running it inside its own MULTI/EXEC, whose reply
// it reads with DecodeApply.
func SendApply(conn redis.Conn, t ApplyTarget, records []Record) error {
	return applyScript.Send(conn, ApplyArgs(t, records)...)
}

// DecodeApply reads the apply script's reply: the statuses, and a *WriteError (with them)
// when Redis refused some writes.
func DecodeApply(reply any, err error) ([]Status, error) {
	parts, err := redis.Values(reply, err)
	if err != nil {
		return nil, fmt.Errorf("apply writes: %w", err)
	}
	if len(parts) != 2 {
		return nil, fmt.Errorf("apply writes: unexpected reply of %d parts", len(parts))
	}
	codes, err := redis.Int64s(parts[0], nil)
	if err != nil {
		return nil, fmt.Errorf("apply writes: statuses: %w", err)
	}
	refused, err := redis.Strings(parts[1], nil)
	if err != nil {
		return nil, fmt.Errorf("apply writes: errors: %w", err)
	}
	out := make([]Status, len(codes))
	for i, s := range codes {
		out[i] = Status(s)
	}
	if len(refused) > 0 {
		return out, &WriteError{Messages: refused}
	}
	return out, nil
}
